"""Writing a turn's side effects: rows written once per key, keyed upserts, collisions reported."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Table, select, update

from adapters.storage.schema import EFFECT_TABLES, handoff_queue, order_updates, tasks
from agent.domain.types import utcnow
from agent.errors import ReferenceCollision


def _effect_row(data: dict[str, Any]) -> dict[str, Any]:
    row = dict(data)
    if isinstance(row.get("findings"), list):
        row["findings"] = json.dumps(row["findings"])
    for key, value in row.items():
        if key.endswith("_at") and isinstance(value, str):
            row[key] = datetime.fromisoformat(value)
    return row


def upsert(conn: Connection, table: Table, key: str, row: dict[str, Any]) -> None:
    """INSERT ... ON CONFLICT DO UPDATE: the latest state of a keyed row."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        pg = pg_insert(table).values(**row)
        conn.execute(pg.on_conflict_do_update(index_elements=[key], set_={k: pg.excluded[k] for k in row if k != key}))
        return
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    lite = sqlite_insert(table).values(**row)
    conn.execute(lite.on_conflict_do_update(index_elements=[key], set_={k: lite.excluded[k] for k in row if k != key}))


def write_effect(conn: Connection, kind: str, data: dict[str, Any]) -> None:
    """Rows are written once per key; updates carry the whole new value, so a replay is harmless."""
    if kind in EFFECT_TABLES:
        table = EFFECT_TABLES[kind]
        res = conn.execute(insert_ignore(conn, table, "id").values(**_effect_row(data)))
        if res.rowcount == 0 and "session_id" in data:
            # The key exists: a replay of this session's own row is fine, anyone else's is a collision.
            owner = conn.execute(select(table.c.session_id).where(table.c.id == data["id"])).scalar()
            if owner != data["session_id"]:
                raise ReferenceCollision(f"{kind} reference {data['id']} already belongs to another conversation")
    elif kind == "order_update":
        row = {"order_id": data["order_id"], "data": json.dumps(data), "updated_at": utcnow()}
        upsert(conn, order_updates, "order_id", row)
    elif kind == "task_change":
        values = {k: data[k] for k in ("title", "status") if k in data}
        conn.execute(
            update(tasks)
            .where(tasks.c.id == data["id"], tasks.c.owner == data["owner"])
            .values(**values, updated_at=utcnow())
        )
    elif kind == "handoff_state":
        upsert(conn, handoff_queue, "session_id", _effect_row(data))
    else:
        raise ValueError(f"no writer for side effect {kind!r}")


def insert_ignore(conn: Connection, table: Table, key: str) -> Any:
    """INSERT ... ON CONFLICT DO NOTHING: side effects and ledger rows are written once per key."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table).on_conflict_do_nothing(index_elements=[key])
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table).on_conflict_do_nothing(index_elements=[key])
