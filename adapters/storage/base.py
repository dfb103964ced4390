"""What every reader and writer beside the session store shares: its units of work run on the
store's database, each in one transaction, once the database is known to be sound and current."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from agent.storage import Database

T = TypeVar("T")


class OnDatabase:
    """A group of units of work on the bot's own database (records, the review inbox, the operator
    page's views, Slack's and Discord's tables).

    Args:
        database: the database the turns commit to (`app.storage.database`, or the SqlStore itself).
    """

    def __init__(self, database: Database):
        self.database = database

    async def _run(self, unit: Callable[..., T], *args: Any, what: str) -> T:
        """`unit(connection, *args)` in one transaction; the first use checks the schema (and
        migrates a local SQLite file), and database failures become StorageError saying `what`."""
        await self.database.ensure_schema()
        result: T = await self.database.run(unit, *args, what=what)
        return result
