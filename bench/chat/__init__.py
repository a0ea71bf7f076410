"""`acdc bench chat`: one reply of `acdc chat`, end to end, with and without a server."""
