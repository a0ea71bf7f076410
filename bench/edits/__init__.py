"""`acdc bench edits`: acdc's edit matcher beside aider's, over a corpus of edits.

`edits_bench` judges every matcher on the corpus (`corpus/`, JSON Lines); `builder` holds
what every case is built from, `cases` and `reported` build the synthetic cases, `history`
and `drift` the cases from real commits, `expect` the judge's own rules; `aider_runner` runs
`aider_child` in aider's own interpreter.
"""
