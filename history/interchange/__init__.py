"""Sessions in and out as files, in AC-DC's formats.

`export`: one session as Markdown or JSON Lines (seed 000's history.jsonl schema), pure
functions of rows already read. `lines`: a history.jsonl file's lines read and checked, no
database. `importer`: those lines into the store, each stored or counted under why not.
The web pages and `acdc export`/`acdc import` call these; nothing here knows about either.
"""
