"""Sessions in and out as files, in AC-DC's formats.

`export`: one session as Markdown or JSON Lines (seed 000's history.jsonl schema), pure
functions of rows already read. `importer`: a history.jsonl file into the store, every line
stored or counted under why it was skipped. The web pages and `acdc export`/`acdc import`
call these; nothing here knows about either.
"""
