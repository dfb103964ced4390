"""SessionStore on SQLAlchemy 2 async: SQLite (aiosqlite) by default, PostgreSQL by URL.

One `commit` is one transaction: the session row (optimistic lock on version), the turn's
messages, its telemetry, tool side effects and the idempotency ledger.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    event,
    insert,
    select,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from agent.errors import StorageError, VersionConflict
from agent.types import Message, SessionState, ToolResult, TurnRecord, utcnow


class UTCDateTime(TypeDecorator[datetime]):
    """Stores UTC, always returns timezone-aware datetimes (SQLite keeps no zone of its own)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime: agentbot stores timezone-aware UTC only")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


metadata = MetaData()

sessions = Table(
    "sessions",
    metadata,
    Column("id", String(255), primary_key=True),
    Column("version", Integer, nullable=False),
    Column("customer_id", String(255)),
    Column("channel_type", String(32)),
    Column("state", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)
messages = Table(
    "messages",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", String(255), nullable=False),
    Column("interaction_id", String(255)),
    Column("role", String(16), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("text", Text, nullable=False),
    Column("meta", Text, nullable=False, default="{}"),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_messages_session", "session_id", "id"),
)
telemetry = Table(
    "telemetry_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", String(255), nullable=False),
    Column("interaction_id", String(255), nullable=False),
    Column("stage", String(64), nullable=False),
    Column("level", String(8), nullable=False),
    Column("payload", Text, nullable=False),
    Column("duration_ms", Float, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_telemetry_session", "session_id", "id"),
)
tickets = Table(
    "tickets",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("session_id", String(255), nullable=False),
    Column("customer_id", String(255)),
    Column("summary", Text, nullable=False),
    Column("order_id", String(64)),
    Column("status", String(32), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)
handoffs = Table(
    "handoffs",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("session_id", String(255), nullable=False),
    Column("customer_id", String(255)),
    Column("reason", Text, nullable=False),
    Column("status", String(32), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)
tool_ledger = Table(
    "tool_ledger",
    metadata,
    Column("idempotency_key", String(64), primary_key=True),
    Column("session_id", String(255), nullable=False),
    Column("tool", String(64), nullable=False),
    Column("result", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

EFFECT_TABLES = {"ticket": tickets, "handoff": handoffs}


def _effect_row(data: dict[str, Any]) -> dict[str, Any]:
    row = dict(data)
    if isinstance(row.get("created_at"), str):
        row["created_at"] = datetime.fromisoformat(row["created_at"])
    return row


class SqlStore:
    """
    Args:
        url: an SQLAlchemy async URL, e.g. `sqlite+aiosqlite:///var/agentbot.db` or
            `postgresql+asyncpg://...`. A SQLite file's folder is created if missing.
        busy_timeout_ms: how long SQLite waits for a lock before the turn gives up cleanly.
    """

    def __init__(self, url: str, *, busy_timeout_ms: int = 5000):
        parsed = make_url(url)
        self.dialect = parsed.get_backend_name()
        if self.dialect == "sqlite" and parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        self.engine: AsyncEngine = create_async_engine(url)
        if self.dialect == "sqlite":
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas(busy_timeout_ms))
        self._ready = False
        self._init_lock = asyncio.Lock()

    async def _ensure_schema(self) -> None:
        if self._ready:
            return
        async with self._init_lock:
            if not self._ready:
                try:
                    async with self.engine.begin() as conn:
                        await conn.run_sync(metadata.create_all)
                except DBAPIError as e:
                    raise StorageError(f"cannot prepare the database: {e.orig}") from e
                self._ready = True

    async def load(self, session_id: str, history_limit: int) -> tuple[SessionState | None, list[Message]]:
        await self._ensure_schema()
        try:
            async with self.engine.connect() as conn:
                row = (await conn.execute(select(sessions.c.state).where(sessions.c.id == session_id))).first()
                if row is None:
                    return None, []
                rows = (
                    await conn.execute(
                        select(
                            messages.c.role, messages.c.kind, messages.c.text, messages.c.meta, messages.c.created_at
                        )
                        .where(messages.c.session_id == session_id)
                        .order_by(messages.c.id.desc())
                        .limit(history_limit)
                    )
                ).all()
        except DBAPIError as e:
            raise StorageError(f"cannot load session {session_id!r}: {e.orig}") from e
        history = [
            Message(role=r.role, kind=r.kind, text=r.text, metadata=json.loads(r.meta), timestamp=r.created_at)
            for r in reversed(rows)
        ]
        return SessionState.model_validate_json(row.state), history

    async def commit(self, turn: TurnRecord) -> None:
        await self._ensure_schema()
        state, now = turn.state, utcnow()
        sid = state.session_id
        try:
            async with self.engine.begin() as conn:
                values = {"version": state.version, "state": state.model_dump_json(), "updated_at": now}
                if turn.expected_version == 0:
                    try:
                        await conn.execute(
                            insert(sessions).values(
                                id=sid,
                                customer_id=state.customer_id,
                                channel_type=state.channel_type.value,
                                created_at=now,
                                **values,
                            )
                        )
                    except IntegrityError as e:
                        raise VersionConflict(sid, 0) from e
                else:
                    res = await conn.execute(
                        update(sessions)
                        .where(sessions.c.id == sid, sessions.c.version == turn.expected_version)
                        .values(**values)
                    )
                    if res.rowcount != 1:
                        raise VersionConflict(sid, turn.expected_version)
                if turn.messages:
                    await conn.execute(
                        insert(messages),
                        [
                            {
                                "session_id": sid,
                                "interaction_id": m.metadata.get("interaction_id"),
                                "role": m.role,
                                "kind": m.kind,
                                "text": m.text,
                                "meta": json.dumps(m.metadata),
                                "created_at": m.timestamp,
                            }
                            for m in turn.messages
                        ],
                    )
                if turn.events:
                    await conn.execute(
                        insert(telemetry),
                        [
                            {
                                "session_id": e.session_id,
                                "interaction_id": e.interaction_id,
                                "stage": e.stage,
                                "level": e.level,
                                "payload": json.dumps(e.payload, default=str),
                                "duration_ms": e.duration_ms,
                                "created_at": e.timestamp,
                            }
                            for e in turn.events
                        ],
                    )
                for key, result in turn.ledger.items():
                    await conn.execute(
                        self._insert_ignore(tool_ledger, "idempotency_key").values(
                            idempotency_key=key,
                            session_id=sid,
                            tool=result.tool,
                            result=result.model_dump_json(),
                            created_at=now,
                        )
                    )
                for effect in turn.effects:
                    table = EFFECT_TABLES[effect.kind]
                    await conn.execute(self._insert_ignore(table, "id").values(**_effect_row(effect.data)))
        except (VersionConflict, StorageError):
            raise
        except DBAPIError as e:
            raise StorageError(f"cannot save session {sid!r}: {e.orig}") from e

    async def ledger_get(self, key: str) -> ToolResult | None:
        await self._ensure_schema()
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(tool_ledger.c.result).where(tool_ledger.c.idempotency_key == key))).first()
        return ToolResult.model_validate_json(row.result) if row else None

    def _insert_ignore(self, table: Table, key: str) -> Any:
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            return pg_insert(table).on_conflict_do_nothing(index_elements=[key])
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(table).on_conflict_do_nothing(index_elements=[key])

    async def aclose(self) -> None:
        await self.engine.dispose()


def _sqlite_pragmas(busy_timeout_ms: int) -> Any:
    def on_connect(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        cur.close()

    return on_connect
