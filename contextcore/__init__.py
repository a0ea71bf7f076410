"""The context engine: what the model sees each turn, in plain Python.

Nothing here imports Django, Channels or litellm (a test enforces it). Everything the
engine needs -- a token counter, an LLM client, model facts, configuration -- is handed
in by the caller, so it runs and is tested in milliseconds without a database.
"""
