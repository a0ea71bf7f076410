"""`acdc bench turn`: what a chat turn costs the server, on disk, on the wire, under load.

`turn_bench` runs the parts: `cost` (CPU and SQL, turns from `pipeline`), `storage`, the
stream (`bench.stream`), `kill` (read back with `probe`) and `load`.
"""
