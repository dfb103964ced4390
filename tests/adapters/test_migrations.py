"""Schema migrations on real SQLite files: a 0.1 database keeps its rows, and every schema change has its revision."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import create_engine, insert, inspect, text

from adapters.memory.sql_memory import SqlPreferenceMemory
from adapters.storage.migrate import head_revision, pending_changes_unit, status_unit
from adapters.storage.schema import metadata
from adapters.storage.sql import SqlStore
from agent.conversation.session import SessionState
from agent.domain.records import Preferences, TurnRecord
from agent.domain.types import Message
from tests.adapters.fixtures import schema_0_1 as old

NOW = datetime(2026, 11, 1, 9, 30, tzinfo=UTC)


def make_0_1_database(path: Path, *, drop_late_columns: bool = False) -> None:
    """What agentbot 0.1 left on disk: tables from create_all, no alembic_version, a conversation and its effects."""
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        old.metadata.create_all(conn)
        state = SessionState(session_id="console:ann", version=2, customer_id="C-001")
        conn.execute(
            insert(old.sessions).values(
                id="console:ann",
                version=2,
                customer_id="C-001",
                channel_type="console",
                state=state.model_dump_json(),
                created_at=NOW,
                updated_at=NOW,
            )
        )
        for role, body in (("user", "where is O-12345"), ("agent", "O-12345 has shipped.")):
            conn.execute(
                insert(old.messages).values(
                    session_id="console:ann", role=role, kind="text", text=body, meta="{}", created_at=NOW
                )
            )
        conn.execute(
            insert(old.refunds).values(
                id="R-1",
                session_id="console:ann",
                customer_id="C-001",
                order_id="O-12345",
                amount=19.5,
                status="issued",
                created_at=NOW,
            )
        )
        conn.execute(
            insert(old.tasks).values(
                id="K-1", owner="ann", number=1, title="call the courier", status="open", created_at=NOW, updated_at=NOW
            )
        )
        conn.execute(
            insert(old.preferences).values(
                customer_id="C-001", data=json.dumps({"preferred_brands": ["Logi"]}), updated_at=NOW
            )
        )
        if drop_late_columns:  # an early 0.1 build, before traces: rebuild messages without trace_id
            conn.execute(text("ALTER TABLE messages DROP COLUMN trace_id"))
    engine.dispose()


def revision_of(path: Path) -> str | None:
    engine = create_engine(f"sqlite:///{path}")
    with engine.connect() as conn:
        current = status_unit(conn).current
    engine.dispose()
    return current


async def test_a_0_1_database_is_migrated_at_start_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "agentbot.db"
    make_0_1_database(path)
    assert revision_of(path) is None
    store = SqlStore(f"sqlite+aiosqlite:///{path}")
    state, history = await store.load("console:ann", 10)
    assert state is not None and state.customer_id == "C-001" and state.version == 2
    assert [m.text for m in history] == ["where is O-12345", "O-12345 has shipped."]
    refunds = await store.fetch("SELECT order_id, amount FROM refunds")
    tasks = await store.fetch("SELECT title FROM tasks WHERE owner = 'ann'")
    assert [(r.order_id, r.amount) for r in refunds] == [("O-12345", 19.5)]
    assert [t.title for t in tasks] == ["call the courier"]
    # New turns are written to the adopted tables, the old rows stay beside them.
    nxt = state.model_copy(update={"version": 3})
    await store.commit(
        TurnRecord(state=nxt, expected_version=2, messages=[Message(role="user", text="thanks")], events=[])
    )
    _, history = await store.load("console:ann", 10)
    assert [m.text for m in history][-1] == "thanks" and len(history) == 3
    memory = SqlPreferenceMemory(runner=store.runner)
    assert await memory.read("C-001") == Preferences(preferred_brands=["Logi"])
    await store.aclose()
    assert revision_of(path) == head_revision()


async def test_an_early_database_without_trace_columns_gets_them(tmp_path: Path) -> None:
    path = tmp_path / "early.db"
    make_0_1_database(path, drop_late_columns=True)
    store = SqlStore(f"sqlite+aiosqlite:///{path}")
    state, history = await store.load("console:ann", 10)
    assert state is not None and len(history) == 2
    rows = await store.fetch("SELECT count(*) AS n FROM messages WHERE trace_id IS NULL")
    assert rows[0].n == 2
    await store.aclose()


async def test_two_stores_starting_together_migrate_once(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'race.db'}"
    stores = [SqlStore(url) for _ in range(4)]
    await asyncio.gather(*(s.ensure_schema() for s in stores))
    statuses = [await s.schema_status() for s in stores]
    assert {s.current for s in statuses} == {head_revision()}
    for s in stores:
        await s.aclose()


async def test_every_table_in_schema_py_has_its_migration(tmp_path: Path) -> None:
    """Fails when schema.py changed without a revision: run `agentbot db revision -m "..."` and review the file."""
    store = SqlStore(f"sqlite+aiosqlite:///{tmp_path / 'fresh.db'}")
    await store.ensure_schema()
    pending = await store.run(pending_changes_unit, what="compare")
    assert pending == [], f"schema.py differs from the migrations: {pending}"
    tables = await store.fetch("SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'alembic_version'")
    assert {r.name for r in tables} == set(metadata.tables)
    await store.aclose()


def test_migrations_form_one_line(tmp_path: Path) -> None:
    """Two branches that each add a revision after the same parent must be chained before they merge."""
    assert head_revision()
    engine = create_engine(f"sqlite:///{tmp_path / 'x.db'}")
    with engine.connect() as conn:
        assert inspect(conn).get_table_names() == []
    engine.dispose()


async def test_duplicate_task_numbers_from_0_1_are_renumbered_before_numbers_become_unique(tmp_path: Path) -> None:
    path = tmp_path / "dupes.db"
    make_0_1_database(path)  # ann has task 1
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:  # 0.1 gave two tasks added at once the same number
        for key, title in (("K-2", "renew passport"), ("K-3", "pay rent")):
            conn.execute(
                insert(old.tasks).values(
                    id=key, owner="ann", number=1, title=title, status="open", created_at=NOW, updated_at=NOW
                )
            )
    engine.dispose()
    store = SqlStore(f"sqlite+aiosqlite:///{path}")
    await store.ensure_schema()
    rows = await store.fetch("SELECT id, number FROM tasks WHERE owner = 'ann' ORDER BY id")
    await store.aclose()
    assert [(r.id, r.number) for r in rows] == [("K-1", 1), ("K-2", 2), ("K-3", 3)]  # all kept, each its own number


async def test_stage_rows_become_one_row_per_turn_and_read_back_the_same(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    make_0_1_database(path)
    stages = [
        ("console:ann:1", "received", {"abandoned": []}, 0.5, 0),
        ("console:ann:1", "intent_classified", {"intent_id": "order_status", "params": {"id": "O-12345"}}, 1.25, 1),
        ("console:ann:1", "memory_updated", {"appended": 2}, 0.75, 2003),
        ("console:ann:2", "received", {"abandoned": []}, 0.5, 900_000),
    ]
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        for interaction, stage, payload, ms, at_us in stages:
            conn.execute(
                insert(old.telemetry).values(
                    session_id="console:ann",
                    interaction_id=interaction,
                    stage=stage,
                    level="info",
                    payload=json.dumps(payload),
                    duration_ms=ms,
                    created_at=NOW + timedelta(microseconds=at_us),
                    trace_id="a" * 32,
                    span_id=f"{len(stage):016x}",
                )
            )
    engine.dispose()
    store = SqlStore(f"sqlite+aiosqlite:///{path}")
    events = await store.telemetry("console:ann")
    turns = await store.fetch("SELECT interaction_id FROM telemetry_turns ORDER BY id")
    view = await store.fetch(
        "SELECT interaction_id, stage, payload, duration_ms, span_id FROM telemetry_events ORDER BY id"
    )
    await store.aclose()
    assert [t.interaction_id for t in turns] == ["console:ann:1", "console:ann:2"]
    expected = [(i, s, p, ms, NOW + timedelta(microseconds=at)) for i, s, p, ms, at in stages]
    assert [(e.interaction_id, e.stage, e.payload, e.duration_ms, e.timestamp) for e in events] == expected
    assert all(e.trace_id == "a" * 32 and e.span_id == f"{len(e.stage):016x}" for e in events)
    # SQL readers still see a row per stage, with the columns the table had.
    assert [(r.interaction_id, r.stage, json.loads(r.payload), r.duration_ms) for r in view] == [
        (i, s, p, ms) for i, s, p, ms, _ in stages
    ]
    assert [r.span_id for r in view] == [e.span_id for e in events]


def test_a_revision_is_its_file_number_so_the_newest_number_is_head() -> None:
    """Start-up reads 'current' without Alembic when the database holds the highest-numbered
    revision: that only holds while every script's revision is its file's number."""
    from alembic.script import ScriptDirectory

    from adapters.storage.migrate import alembic_config, newest_numbered

    for script in ScriptDirectory.from_config(alembic_config()).walk_revisions():
        assert Path(script.path).name.startswith(f"{script.revision}_"), script.path
    assert newest_numbered() == head_revision()


def test_a_current_database_is_checked_without_importing_alembic(tmp_path: Path) -> None:
    """Alembic costs a process ~17 MB; a worker whose database is current never imports it."""
    import subprocess
    import sys

    url = f"sqlite+aiosqlite:///{tmp_path / 'current.db'}"
    asyncio.run(_migrated(url))
    check = (
        "import asyncio, sys\n"
        "from adapters.storage.sql import SqlStore\n"
        "async def main():\n"
        f"    store = SqlStore({url!r})\n"
        "    try:\n"
        "        status = await store.schema_status()\n"
        "    finally:\n"
        "        await store.aclose()\n"
        "    print(status.behind, any(m.split('.')[0] == 'alembic' for m in sys.modules))\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True, cwd=Path.cwd())
    assert out.stdout.split() == ["False", "False"]


async def _migrated(url: str) -> None:
    store = SqlStore(url, migrate=True)
    try:
        await store.ensure_schema()
    finally:
        await store.aclose()
