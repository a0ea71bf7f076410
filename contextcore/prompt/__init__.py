"""The prompt: what the model sees, byte for byte, and how it stays cached.

Assembly into messages with cache breakpoints (`assembly`), acdc's append-only cache layout
(`appendonly`), building one request under the hard cap (`request`), how file contents are
written and read back (`revisions`), how long each item has stayed unchanged (`stability`),
requests that reuse the chat's cache (`siderequest`), what keep-alive refreshes cost and
saved (`refreshledger`), and a provider's cache under its documented rules (`cachesim`,
`cacherules`). Invariant: pure and deterministic, so equal inputs give equal bytes.
Non-goal: deciding what is in the context.
"""
