"""Writing a turn's side effects: rows written once per key, keyed upserts, collisions reported.

The built-in kinds have tables of their own; any other kind a tool declares goes to `records`, one
row per kind and key, so a new kind of record needs no migration and no writer here.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Table, select, update

from adapters.storage.schema import EFFECT_TABLES, handoff_queue, order_updates, records, tasks
from agent.domain.types import SideEffect, utcnow
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


# The kinds written to tables of their own below; every other kind goes to `records`.
BUILT_IN_KINDS = frozenset({*EFFECT_TABLES, "order_update", "task_change", "handoff_state"})


def write_effect(conn: Connection, effect: SideEffect, session_id: str) -> None:
    """Rows are written once per key; updates carry the whole new value, so a replay is harmless.

    Args:
        conn: the turn's transaction.
        effect: what a tool (or the turn) asked to write.
        session_id: the conversation whose turn writes it.
    """
    kind, data = effect.kind, effect.data
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
        write_record(conn, effect, session_id)


def write_record(conn: Connection, effect: SideEffect, session_id: str) -> None:
    """A record of a kind without a table of its own, once per kind and key: a replay of this
    conversation's own record is harmless, another conversation's key is a collision."""
    row = {
        "kind": effect.kind,
        "key": effect.key,
        "session_id": session_id,
        "owner": effect.owner,
        "data": json.dumps(effect.data, separators=(",", ":"), default=str),
        "created_at": utcnow(),
    }
    if conn.execute(insert_ignore(conn, records, "kind", "key").values(**row)).rowcount == 0:
        found = select(records.c.session_id).where(records.c.kind == effect.kind, records.c.key == effect.key)
        if conn.execute(found).scalar() != session_id:
            raise ReferenceCollision(f"{effect.kind} {effect.key} already belongs to another conversation")


def insert_ignore(conn: Connection, table: Table, *key: str) -> Any:
    """INSERT ... ON CONFLICT DO NOTHING: side effects and ledger rows are written once per key
    (one column, or several that are unique together)."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table).on_conflict_do_nothing(index_elements=list(key))
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table).on_conflict_do_nothing(index_elements=list(key))
