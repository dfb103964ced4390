"""The SQL store as a `Storage` bundle: every capability the core and the channels use, on one database."""

from __future__ import annotations

from adapters.memory.sql_memory import SqlPreferenceMemory
from adapters.storage.inbox import SqlInbox
from adapters.storage.outbox import SqlOutbox
from adapters.storage.records import SqlRecords
from adapters.storage.spend import SqlSpend
from adapters.storage.sql import SqlStore
from agent.storage import PreferenceMemory, Storage


def sql_storage(store: SqlStore, preferences: PreferenceMemory | None = None) -> Storage:
    """Sessions and every record the bot writes in a turn's transaction, the exactly-once inbox and
    outbox, the LLM spend and customers' preferences, all on the store's database.

    Args:
        store: the session store whose database holds all of it.
        preferences: where customers' preferences live instead (Zep); default: the same database.
    """
    # One reader serves everything the turns wrote: tasks, tickets, refunds, order updates, handoffs,
    # reports, and the records of kinds without a table of their own.
    kinds = ("tasks", "tickets", "refunds", "orders", "handoffs", "risk_reports", "demo", "records")
    written = dict.fromkeys(kinds, SqlRecords(store))
    return Storage(
        sessions=store,
        inbox=SqlInbox(store),
        outbox=SqlOutbox(store),
        spend=SqlSpend(store),
        # Sharing the store's runner keeps one SQLite connection and thread per database.
        preferences=preferences or SqlPreferenceMemory(runner=store.runner),
        database=store,
        **written,
    )
