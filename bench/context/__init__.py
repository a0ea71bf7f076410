"""`acdc bench context`: what the model is sent, measured by what the task needs (`--part`:
`trail`, the artifact trail after compactions)."""
