"""Branches of a conversation: versions of a message, and forks into a new session.

A version is the set-aside mechanism with a link: writing a user message again (Regenerate
asks its question again, Edit sends new text) sets aside the path from it, as a rollback
does, and the new user message names the first version (`Message.alt_of`). The version out
of view keeps the ids of its path (`Message.branch_path`), so switching back restores
exactly what was in view then. The working history is derived from the rows in view, so
the next request follows the version shown, and its prefix changes from that message only.
"""
