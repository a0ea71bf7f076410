"""The model's tools: the contract every tool shares (`calls`) and the context tools that
read the repository and change the session's sets (`context`). The edit tools are
`chat.repo.edittools`, offered only with ACDC_EDITS on.
"""
