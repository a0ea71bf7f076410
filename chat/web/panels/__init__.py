"""The panels' side of following a session: the Files panel's updates and a choice's answer
as fragments, and the version that says which panels changed (`chat.live.follower` keeps
the open tabs in step with it)."""
