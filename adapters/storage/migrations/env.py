"""Alembic's entry point: it always runs on a connection agentbot hands it (adapters/storage/migrate.py)."""

from __future__ import annotations

from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext

from adapters.storage.schema import UTCDateTime, metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through `agentbot db upgrade`, which supplies the database connection")


def render_item(kind: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    """Revisions spell UTCDateTime as the column type it stores, so they never import the live schema."""
    if kind == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


# Batch mode lets one migration file alter columns on SQLite (copy-and-move) and on PostgreSQL (ALTER).
context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=True,
    compare_type=True,
    render_item=render_item,
)
with context.begin_transaction():
    context.run_migrations()
