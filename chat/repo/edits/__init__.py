"""Edits as repository access: the model's proposed changes meet the disk here.

`disk` judges a path through the repository boundary and writes a file atomically;
`versions` binds what is written to the file's content object; `applying` proposes and
applies a set of edits (validated whole before any write); `undo` writes earlier content
back as new versions; `replies` turns a finished reply's SEARCH/REPLACE blocks into
pending edits. The matching itself is `contextcore.edits`; pending rows are `history.edits`.
"""
