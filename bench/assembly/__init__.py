"""`acdc bench assembly`: one turn's context work, timed, and its memory (`assembly_bench`)."""
