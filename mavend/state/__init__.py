"""What mavend keeps: the SQLite state database and the records in it.

    store    the file: connections, transactions, migrations and storage errors
    records  facts, notes, the turn log, act runs and the session's small state

Reminders (mavend/scheduler/), lists (mavend/lists/) and memory (mavend/memory/) keep
their own tables in the same file, through `store.Store`.
"""
