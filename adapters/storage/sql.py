"""SessionStore on SQLAlchemy 2: SQLite by default, PostgreSQL by URL.

One `commit` is one transaction: the session row (optimistic lock on version), the turn's
messages, its telemetry, tool side effects and the idempotency ledger. Each unit of work is one
plain function of a SQLAlchemy `Connection`; `adapters/storage/runners.py` runs it without
blocking the event loop, in the way that is fastest for the backend.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Connection,
    Integer,
    Row,
    bindparam,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, IntegrityError

from adapters.storage.migrate import SchemaStatus, status_unit, upgrade_unit
from adapters.storage.outbox import commit_event
from adapters.storage.prepared import Prepared
from adapters.storage.review import write_review
from adapters.storage.runners import Runner, make_runner
from adapters.storage.schema import (
    damaged,
    inbox,
    integrity_unit,
    messages,
    sessions,
    telemetry,
    tool_ledger,
)
from adapters.storage.telemetry import all_events, turn_rows
from adapters.storage.writes import insert_ignore, write_effect
from agent.conversation.session import SessionState
from agent.domain.records import TelemetryEvent, TurnRecord
from agent.domain.types import Message, ToolResult, utcnow
from agent.errors import ReferenceCollision, SchemaBehind, StorageError, VersionConflict

# Statements are built once (constructing them per call cost more than running them), and every
# turn's are `Prepared`: on SQLite they run on the driver's cursor.
SELECT_STATE = Prepared(select(sessions.c.state).where(sessions.c.id == bindparam("b_sid")))
SELECT_HISTORY = Prepared(
    select(messages.c.role, messages.c.kind, messages.c.text, messages.c.meta, messages.c.created_at)
    .where(messages.c.session_id == bindparam("b_sid"))
    .order_by(messages.c.id.desc())
    .limit(bindparam("b_limit", type_=Integer))
)
INSERT_SESSION = Prepared(
    insert(sessions), ["id", "version", "customer_id", "channel_type", "state", "created_at", "updated_at"]
)
UPDATE_SESSION = Prepared(
    update(sessions)
    .where(sessions.c.id == bindparam("b_sid"), sessions.c.version == bindparam("b_expected"))
    .values(version=bindparam("b_version"), state=bindparam("b_state"), updated_at=bindparam("b_now"))
)
INSERT_MESSAGES = Prepared(
    insert(messages), ["session_id", "interaction_id", "role", "kind", "text", "meta", "created_at", "trace_id"]
)
INSERT_EVENTS = Prepared(insert(telemetry), ["session_id", "interaction_id", "created_at", "trace_id", "stages"])
FINISH_INBOX = (
    update(inbox).where(inbox.c.key == bindparam("b_key")).values(status="done", finished_at=bindparam("b_now"))
)

SELECT_TELEMETRY = select(telemetry).where(telemetry.c.session_id == bindparam("b_sid")).order_by(telemetry.c.id)
SELECT_LEDGER = select(tool_ledger.c.result).where(tool_ledger.c.idempotency_key == bindparam("b_key"))


def load_unit(conn: Connection, session_id: str, history_limit: int) -> tuple[SessionState | None, list[Message]]:
    row = SELECT_STATE.first(conn, {"b_sid": session_id})
    if row is None or history_limit == 0:
        return (SessionState.model_validate_json(row.state) if row else None), []
    rows = SELECT_HISTORY.all(conn, {"b_sid": session_id, "b_limit": history_limit})
    history = [
        Message(role=r.role, kind=r.kind, text=r.text, metadata=json.loads(r.meta), timestamp=r.created_at)
        for r in reversed(rows)
    ]
    return SessionState.model_validate_json(row.state), history


def commit_unit(conn: Connection, turn: TurnRecord) -> None:
    now = utcnow()
    sid = turn.state.session_id
    _write_session(conn, turn, now)
    if turn.messages:
        INSERT_MESSAGES.run(conn, _message_rows(turn))
    if turn.events:
        INSERT_EVENTS.run(conn, turn_rows(turn.events))
    if turn.review:
        write_review(conn, turn.review)
    if turn.inbox_key:
        commit_event(conn, turn.inbox_key, sid, turn.outbox, now)
    for key, result in turn.ledger.items():
        conn.execute(
            insert_ignore(conn, tool_ledger, "idempotency_key").values(
                idempotency_key=key, session_id=sid, tool=result.tool, result=result.model_dump_json(), created_at=now
            )
        )
    try:
        for effect in turn.effects:
            write_effect(conn, effect, sid)
    except IntegrityError as e:
        # A per-owner task number another turn took first: re-run the turn on fresh state.
        raise VersionConflict(sid, turn.expected_version) from e


def _write_session(conn: Connection, turn: TurnRecord, now: datetime) -> None:
    """Insert a new session's row or update an existing one at the version the turn read; another
    writer having got there first is a VersionConflict."""
    state = turn.state
    sid, body = state.session_id, state.model_dump_json()
    if turn.expected_version == 0:
        try:
            INSERT_SESSION.run(
                conn,
                {
                    "id": sid,
                    "version": state.version,
                    "customer_id": state.customer_id,
                    "channel_type": state.channel_type.value,
                    "state": body,
                    "created_at": now,
                    "updated_at": now,
                },
            )
        except IntegrityError as e:
            raise VersionConflict(sid, 0) from e
        return
    changed = UPDATE_SESSION.run(
        conn,
        {"b_sid": sid, "b_expected": turn.expected_version, "b_version": state.version, "b_state": body, "b_now": now},
    )
    if changed != 1:
        raise VersionConflict(sid, turn.expected_version)


def _message_rows(turn: TurnRecord) -> list[dict[str, Any]]:
    return [
        {
            "session_id": turn.state.session_id,
            "interaction_id": m.metadata.get("interaction_id"),
            "role": m.role,
            "kind": m.kind,
            "text": m.text,
            "meta": json.dumps(m.metadata, separators=(",", ":")),
            "created_at": m.timestamp,
            "trace_id": turn.trace_id,
        }
        for m in turn.messages
    ]


def telemetry_unit(conn: Connection, session_id: str) -> list[TelemetryEvent]:
    return all_events(conn.execute(SELECT_TELEMETRY, {"b_sid": session_id}).all())


def ledger_unit(conn: Connection, key: str) -> ToolResult | None:
    row = conn.execute(SELECT_LEDGER, {"b_key": key}).first()
    return ToolResult.model_validate_json(row.result) if row else None


class SqlStore:
    """
    Args:
        url: an SQLAlchemy URL: `sqlite+aiosqlite:///var/agentbot.db` (the default; a SQLite file's
            folder is created if missing) or `postgresql+asyncpg://user@host/db`.
        busy_timeout_ms: how long SQLite waits for another process's lock before the turn gives up.
        synchronous: SQLite durability, `normal` (WAL; the last commits may be lost on power loss,
            never on a process crash) or `full` (every commit synced to disk).
        migrate: bring the schema to the newest revision on first use. Default: yes for SQLite (a local
            file, one owner), no elsewhere: a shared PostgreSQL is migrated by `agentbot db upgrade`,
            and until then every use fails with SchemaBehind saying so.
    """

    def __init__(
        self, url: str, *, busy_timeout_ms: int = 5000, synchronous: str = "normal", migrate: bool | None = None
    ):
        self.runner: Runner = make_runner(url, busy_timeout_ms=busy_timeout_ms, synchronous=synchronous)
        self.url = make_url(url).render_as_string(hide_password=True)  # for status lines, never the password
        self.migrate = url.startswith("sqlite") if migrate is None else migrate
        self._ready = False

    async def ensure_schema(self) -> None:
        if self._ready:
            return
        try:
            problems = await self.run(integrity_unit, what="open the database")
        except StorageError as e:
            if "malformed" not in str(e) and "not a database" not in str(e):
                raise
            problems = [str(e)]
        if problems:
            raise damaged(make_url(self.url).database or "?", problems)
        status = await self.schema_status()
        if status.behind and self.migrate:
            try:
                status = await self.upgrade()
            except StorageError:
                status = await self.schema_status()  # another worker migrated the same file just now
        if status.behind:
            raise SchemaBehind(status.current, status.head)
        self._ready = True

    async def schema_status(self) -> SchemaStatus:
        return await self.run(status_unit, what="open the database")  # type: ignore[no-any-return]

    async def upgrade(self) -> SchemaStatus:
        """Apply every migration the database lacks (what `agentbot db upgrade` runs)."""
        return await self.run(upgrade_unit, what="migrate the database")  # type: ignore[no-any-return]

    async def run(self, fn: Any, *args: Any, what: str) -> Any:
        """Run `fn(connection, *args)` in one transaction; database failures become StorageError."""
        try:
            return await self.runner.run(fn, *args)
        except (VersionConflict, StorageError, ReferenceCollision):
            raise
        except DBAPIError as e:
            raise StorageError(f"cannot {what}: {e.orig}") from e
        except OSError as e:  # the server cannot be reached: the driver raises before SQLAlchemy wraps anything
            raise StorageError(f"cannot {what}: {e}") from e

    async def load(self, session_id: str, history_limit: int) -> tuple[SessionState | None, list[Message]]:
        await self.ensure_schema()
        return await self.run(load_unit, session_id, history_limit, what=f"load session {session_id!r}")  # type: ignore[no-any-return]

    async def commit(self, turn: TurnRecord) -> None:
        await self.ensure_schema()
        await self.run(commit_unit, turn, what=f"save session {turn.state.session_id!r}")

    async def telemetry(self, session_id: str) -> list[TelemetryEvent]:
        """Every stored telemetry event of a session, in the order its turns emitted them."""
        await self.ensure_schema()
        return await self.run(telemetry_unit, session_id, what="read telemetry")  # type: ignore[no-any-return]

    async def ledger_get(self, key: str) -> ToolResult | None:
        await self.ensure_schema()
        return await self.run(ledger_unit, key, what="read the tool ledger")  # type: ignore[no-any-return]

    async def fetch(self, query: str, **params: Any) -> Sequence[Row[Any]]:
        """Rows of a read-only SQL query: for the CLI, admin commands and tests."""
        await self.ensure_schema()

        def unit(conn: Connection) -> Sequence[Row[Any]]:
            return conn.execute(text(query), params).all()

        return await self.run(unit, what="run a query")  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        await self.runner.aclose()
