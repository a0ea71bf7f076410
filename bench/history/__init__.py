"""`acdc bench history`: search, listing, loading and restore on a large session store.

`history_bench` runs it and reports; `spec` holds the store's sizes (both sides read them);
`store` builds the store through the ORM and times it, imported once Django is set up.
"""
