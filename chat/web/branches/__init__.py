"""The chat page's branch actions: show another version of a message, fork a session."""
