"""The SQL session store on a real SQLite file: atomic turns, optimistic locking, UTC timestamps."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert

from adapters.storage.records import IDS_PER_STATEMENT, SqlRecords
from adapters.storage.schema import order_updates, refunds
from adapters.storage.sql import SqlStore
from agent.conversation.session import LEGACY_SPEAKER, SessionState
from agent.domain.records import TelemetryEvent, TurnRecord
from agent.domain.types import Message, SideEffect
from agent.errors import ConfigError, VersionConflict
from bots.app import build_app
from tests.helpers import REPO, say


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[SqlStore]:
    s = SqlStore(db_url)
    yield s
    await s.aclose()


def turn(version: int, expected: int, *texts: str, effects: list[SideEffect] | None = None) -> TurnRecord:
    state = SessionState(session_id="s", version=version, llm_budget_notice_day=f"v{version}")
    return TurnRecord(
        state=state,
        expected_version=expected,
        messages=[Message(role="user", text=t) for t in texts],
        events=[TelemetryEvent(session_id="s", interaction_id="i", stage="received")],
        effects=effects or [],
    )


async def test_new_session_loads_as_none(store: SqlStore) -> None:
    assert await store.load("nobody", 20) == (None, [])


async def test_commit_then_load_round_trips_state_and_history(store: SqlStore) -> None:
    await store.commit(turn(1, 0, "one", "two"))
    await store.commit(turn(2, 1, "three"))
    state, history = await store.load("s", 2)
    assert state is not None and state.version == 2 and state.llm_budget_notice_day == "v2"
    assert [m.text for m in history] == ["two", "three"]  # the latest two, oldest first
    assert all(m.timestamp.tzinfo is not None for m in history)


async def test_stale_version_is_a_conflict_and_writes_nothing(store: SqlStore) -> None:
    await store.commit(turn(1, 0, "first"))
    await store.commit(turn(2, 1, "second"))
    with pytest.raises(VersionConflict):
        await store.commit(
            turn(
                2,
                1,
                "stale",
                effects=[
                    SideEffect(
                        kind="ticket",
                        key="T-1",
                        data={
                            "id": "T-1",
                            "session_id": "s",
                            "summary": "x",
                            "status": "open",
                            "created_at": "2026-01-01T00:00:00+00:00",
                        },
                    )
                ],
            )
        )
    texts = [r.text for r in await store.fetch("SELECT text FROM messages ORDER BY id")]
    tickets = (await store.fetch("SELECT count(*) AS n FROM tickets"))[0].n
    assert texts == ["first", "second"] and tickets == 0


async def test_two_creators_of_one_session_conflict(store: SqlStore) -> None:
    await store.commit(turn(1, 0, "a"))
    with pytest.raises(VersionConflict):
        await store.commit(turn(1, 0, "b"))


async def test_sqlite_runs_in_wal_mode(store: SqlStore) -> None:
    assert (await store.fetch("PRAGMA journal_mode"))[0][0] == "wal"
    assert (await store.fetch("PRAGMA synchronous"))[0][0] == 1  # NORMAL, the shipped durability


async def test_durability_is_a_setting(db_url: str, tmp_path: Path) -> None:
    full = SqlStore(db_url, synchronous="full")
    await full.commit(turn(1, 0, "kept"))
    assert (await full.fetch("PRAGMA synchronous"))[0][0] == 2  # FULL: every commit synced
    await full.aclose()
    config = tmp_path / "config"
    shutil.copytree(REPO / "config", config)
    with (config / "settings.yaml").open("a") as f:
        f.write("db_synchronous: full\n")
    async with build_app(config, REPO / "data", db_url) as app:
        assert isinstance(app.store, SqlStore)
        assert (await app.store.fetch("PRAGMA synchronous"))[0][0] == 2
    with pytest.raises(ConfigError, match="AGENTBOT_DB_SYNCHRONOUS"):
        build_app(REPO / "config", REPO / "data", db_url, env={"AGENTBOT_DB_SYNCHRONOUS": "sometimes"})


async def test_a_session_stored_in_the_old_facts_shape_loads_into_typed_fields(store: SqlStore, db_url: str) -> None:
    await store.commit(turn(1, 0, "one"))  # creates the schema and the row
    old = {
        "session_id": "s",
        "version": 1,
        "handoff": {"status": "requested", "reason": "asked"},
        "facts": {
            "confirmed_action": {"hash": "abc", "tool": "issue_refund", "answer": "Refunded."},
            "approved_action": "abc",
            "llm_usage": {"calls": 3, "tokens_in": 10, "tokens_out": 5, "cost": 0.01},
            "llm_budget_notice": "2026-11-01",
            "history_summary": {"text": "asked twice", "through": "2026-11-01T00:00:00+00:00"},
            "handoff_acknowledged": True,
        },
    }
    path = db_url.removeprefix("sqlite+aiosqlite:///")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE sessions SET state = ? WHERE id = 's'", (json.dumps(old),))
    state, _ = await store.load("s", 0)
    assert state is not None
    legacy = state.speakers[LEGACY_SPEAKER].confirmed_action  # goals and confirmations from before speakers
    assert legacy is not None and legacy.answer == "Refunded."
    assert state.llm_usage.calls == 3 and state.llm_budget_notice_day == "2026-11-01"
    assert state.history_summary is not None and state.history_summary.text == "asked twice"
    assert state.handoff is not None and state.handoff.acknowledged
    assert "approved_action" not in state.model_dump_json()  # a per-turn value is never carried over


async def test_a_closed_store_refuses_work_instead_of_waiting_forever(tmp_path: Path) -> None:
    store = SqlStore(f"sqlite+aiosqlite:///{tmp_path}/closed.db")
    await store.ensure_schema()
    await store.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await store.load("s-1", 10)


async def test_the_log_is_checkpointed_in_the_background_not_by_a_commit(tmp_path: Path) -> None:
    """Commits only append to the write-ahead log (a commit checkpoints only past 10,000 pages); the
    checkpoint thread copies the log into the database file, which is where the rows then are."""
    path = tmp_path / "bg.db"
    store = SqlStore(f"sqlite+aiosqlite:///{path}")
    await store.ensure_schema()
    await store.fetch("PRAGMA wal_checkpoint(TRUNCATE)")  # start from an empty log
    before = path.stat().st_size
    for version in range(1, 21):
        await store.commit(turn(version, version - 1, "x" * 2000))
    for _ in range(100):  # the thread runs every 0.25 s
        if path.stat().st_size > before:
            break
        await asyncio.sleep(0.05)
    grown = path.stat().st_size > before  # before closing: the last connection's close checkpoints too
    await store.aclose()
    assert grown
    rows = sqlite3.connect(path).execute("SELECT count(*) FROM messages").fetchone()
    assert rows == (20,)


async def test_a_demo_reset_forgets_the_results_of_what_it_drops(db_url: str) -> None:
    """The refund and its kept result go; a ticket (not demo data) and its result stay, so a
    replayed confirmation refunds again instead of answering from a forgotten refund."""
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        await say(app.router, "refund order O-23456 please", session="r")
        refunded, _ = await say(app.router, "yes", session="r")
        await say(app.router, "open a ticket: my monitor arrived with a cracked screen", session="t")
        kept = [r.tool for r in await app.store.fetch("SELECT tool FROM tool_ledger ORDER BY tool")]  # type: ignore[attr-defined]
        assert app.storage.demo is not None
        dropped = await app.storage.demo.reset_demo()
        left = [r.tool for r in await app.store.fetch("SELECT tool FROM tool_ledger")]  # type: ignore[attr-defined]
        refunds = await app.store.fetch("SELECT id FROM refunds")  # type: ignore[attr-defined]
    assert "Done: I've refunded" in refunded.text
    assert kept == ["create_ticket", "issue_refund"]
    assert (dropped, left, list(refunds)) == (2, ["create_ticket"], [])  # the refund and the order's update


async def test_updates_of_many_orders(any_db_url: str) -> None:
    """`updates_of` for more orders than one statement takes: every order's update and every refund
    is found (two refunds of one order summed), and an order the bot never touched has none."""
    store = SqlStore(any_db_url, migrate=True)
    ids = [f"O-{n:05d}" for n in range(IDS_PER_STATEMENT * 2 + 3)]
    first, last, middle = ids[0], ids[-1], ids[IDS_PER_STATEMENT]
    at = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)

    def write(conn: Any) -> None:
        conn.execute(insert(order_updates), [{"order_id": last, "data": '{"note": "late"}', "updated_at": at}])
        rows = [(first, 10.0), (middle, 5.0), (middle, 7.5)]
        conn.execute(
            insert(refunds),
            [
                {
                    "id": f"r{n}",
                    "session_id": "s",
                    "customer_id": "C",
                    "order_id": o,
                    "amount": a,
                    "status": "issued",
                    "created_at": at,
                }
                for n, (o, a) in enumerate(rows)
            ],
        )

    try:
        await store.ensure_schema()
        await store.run(write, what="write updates")
        found = await SqlRecords(store).updates_of(ids)
    finally:
        await store.aclose()
    assert set(found) == {first, middle, last}
    assert found[middle]["refund_amount"] == 12.5 and found[middle]["refund_count"] == 2
    assert found[first]["status"] == "refunded" and found[last] == {"note": "late"}


async def test_the_demo_starts_once_and_again_after_a_reset(db_url: str) -> None:
    """The demo's first day is the first reader's, for every later reader and worker, until a reset
    makes the next reader's day the first."""
    store = SqlStore(db_url, migrate=True)
    records, other_worker = SqlRecords(store), SqlRecords(store)
    try:
        await store.ensure_schema()
        first = await records.demo_started_on(date(2026, 11, 1))
        assert await records.demo_started_on(date(2026, 11, 5)) == first == date(2026, 11, 1)
        assert await other_worker.demo_started_on(date(2026, 11, 9)) == first
        await records.reset_demo()
        assert await records.demo_started_on(date(2026, 11, 9)) == date(2026, 11, 9)
    finally:
        await store.aclose()
