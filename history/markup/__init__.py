"""Stored model text as the pages show it: one renderer for the chat and History (`render`)."""
