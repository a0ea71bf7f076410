"""`acdc bench cache`: scripted sessions priced under every provider's cache rules.

`cache_bench` runs it and `compare` judges the layouts against the goals; the requests are
recorded by `replay` (through the turn pipeline) and priced by `pricing`; `explain` and
`compaction` give the figures behind the report's paragraphs; `wire` and `wire_drive` play
the same sessions through `acdc serve` against the loopback fakes (`bench.wirefakes`).
"""
