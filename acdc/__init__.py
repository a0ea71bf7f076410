"""acdc: chat with an LLM about a local git repository."""
