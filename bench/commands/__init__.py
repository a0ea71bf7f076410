"""`acdc bench commands`: what the command sandbox costs a run (`commands_bench`)."""
