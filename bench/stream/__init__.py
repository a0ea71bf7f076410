"""The stream benchmark (`acdc bench turn --part stream`): what streaming an answer costs.

`stream_bench` measures the server's side in process; `sidebyside` puts acdc's stream beside
the bare relays (`relay`) at a provider's pace (`paced`).
"""
