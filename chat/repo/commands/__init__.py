"""Commands the person declared, run for the model in a sandbox (issue 32).

`declaring` keeps the declarations (rows of acdc's data, never a file of the work tree);
`suggestions` proposes some from the repository's files; `sandbox` builds a run's
environment and its bubblewrap command line; `runner` runs one argv bounded (process
group, timeout, cancel, one run per session); `output` caps what is stored and what the
model reads; `model_tools` are `run_command` and `propose_command`; `answering` is the
person's answer to a proposal, `waits` a page's turn waiting for it (`proposal_state`
reads the proposal), and `livefeed` a
running command's output on its way to the card.
"""
