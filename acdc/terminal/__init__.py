"""`acdc chat` through a running `acdc serve`: the run file that says where the server is,
the light client the CLI runs, and the server's endpoint that hosts the client's turn."""
