"""`acdc bench map` and `acdc bench repo`: the repository map, the Files panel's tree
and token counts, and the credential scan, on big repositories.

`map_bench` times the map; `repo_bench` the listing and counting (`timings`, with `probe`
in a process of its own) and the scan (`credential_scan`); `picker_updates` (run with
`python -m`) measures the Files panel's live updates on the wire.
"""
