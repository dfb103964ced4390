"""The router through the public API: the spec's tests 1-3, delivery order, bad input, conflicts."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest

from adapters.data.json_source import JSONDataSource
from agent.app import App
from agent.context.log import Turn
from agent.domain.records import TelemetryEvent
from agent.domain.types import OutboundMessage
from agent.redaction import Redactor
from agent.turn.router import AgentRouter
from bots.app import build_app
from tests.helpers import REPO, demo_day, interaction, say
from tests.standins.telemetry import CollectingSink

DESIGN_STAGES = [
    "received",
    "history_loaded",
    "intents_eligible",
    "intent_classified",
    "goal_updated",
    "plan_created",
    "plan_type",
    "plan_communicated",
    "policy_check",
    "tool_execute",
    "response_generated",
    "memory_updated",
]


async def rows(app: App, query: str) -> list[Any]:
    return list(await app.store.fetch(query))  # type: ignore[attr-defined]


async def test_single_turn_with_complete_info(router: AgentRouter) -> None:
    response, _ = await say(router, "Where's order O-12345?", session="test-1")
    assert "shipped" in response.text.lower()
    assert "UPS" in response.text and demo_day(6) in response.text
    assert response.needs_user_input is False
    assert [r.tool for r in response.tool_results] == ["check_order_status"]


async def test_multi_turn_collects_the_order_id(router: AgentRouter) -> None:
    first, _ = await say(router, "Check my order", session="test-2")
    assert first.needs_user_input is True
    assert first.missing_param == "order_id"
    assert "order id" in first.text.lower()
    second, _ = await say(router, "O-12345", session="test-2")
    assert "shipped" in second.text.lower()
    assert second.needs_user_input is False


async def test_telemetry_stages_follow_design_order(app: App, router: AgentRouter, sink: CollectingSink) -> None:
    response, _ = await say(router, "Where's O-12345?", session="test-3")
    assert [e.stage for e in sink.for_interaction(response.interaction_id)] == DESIGN_STAGES
    stored = await rows(app, "SELECT stage FROM telemetry_events ORDER BY id")
    assert [r.stage for r in stored] == DESIGN_STAGES
    assert all(e.timestamp.tzinfo is not None for e in sink.events)


class RecordingData(JSONDataSource):
    """The real JSON data source, noting in a shared log when a tool reads it."""

    def __init__(self, log: list[str]):
        super().__init__(REPO / "data")
        self.log = log

    async def get_order(self, order_id: str) -> dict[str, Any] | None:
        self.log.append(f"tool:{order_id}")
        return await super().get_order(order_id)


async def test_pre_message_reaches_the_channel_before_the_tool_runs(db_url: str) -> None:
    log: list[str] = []

    async def reply(m: OutboundMessage) -> None:
        log.append(f"{m.kind}:{m.text}")

    async with build_app(REPO / "config", REPO / "data", db_url, data_source=RecordingData(log)) as app:
        router = app.router
        await router.handle(interaction("track O-12345"), reply=reply)
    assert log[0] == "pre:Checking order O-12345..."
    # The privacy rule reads the order (whose is it?) before the tool runs, after the pre-message;
    # the tool is answered from that same read (the turn's TurnReads): one read per turn.
    assert log[1:-1] == ["tool:O-12345"]
    assert log[-1].startswith("answer:Your order O-12345 has shipped")


async def test_each_turn_reads_the_order_afresh(db_url: str) -> None:
    """One read per turn, never one per conversation: a refund stored by the first turn is what the
    second turn's lookup shows."""
    log: list[str] = []
    async with build_app(REPO / "config", REPO / "data", db_url, data_source=RecordingData(log)) as app:
        await say(app.router, "refund O-23456 please, it arrived broken", session="fresh")
        confirmed, _ = await say(app.router, "yes", session="fresh")
        status, _ = await say(app.router, "what's the status of O-23456?", session="fresh")
    assert "refund" in confirmed.text.lower()
    assert "refunded" in status.text.lower()
    assert log.count("tool:O-23456") == 3  # a read in each turn, the policy check and the tool sharing it


async def test_turns_continue_across_routers_on_one_database(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        first = app.router
        r1, _ = await say(first, "I want to check my order", session="cross")
    assert r1.missing_param == "order_id"
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        second = app.router
        r2, _ = await say(second, "o-12345", session="cross")
    assert "shipped" in r2.text


@pytest.mark.parametrize(
    ("text", "shown"),
    [("", "didn't catch anything"), ("   \n\t ", "didn't catch anything"), ("x" * 100_000, "too long")],
)
async def test_unusable_input_is_answered_and_nothing_is_stored(
    app: App, router: AgentRouter, text: str, shown: str
) -> None:
    response, delivered = await say(router, text, session="bad")
    assert shown in response.text
    assert [m.kind for m in delivered] == ["error"]
    assert await rows(app, "SELECT * FROM sessions") == []
    assert await rows(app, "SELECT * FROM messages") == []


async def test_control_characters_are_stripped_before_understanding(app: App, router: AgentRouter) -> None:
    response, _ = await say(router, "where\x00 is\x1b my order\u200b O-12345\x07", session="ctl")
    assert "shipped" in response.text
    stored = await rows(app, "SELECT text FROM messages WHERE role = 'user'")
    assert stored[0].text == "where is my order O-12345"


class GatedData(JSONDataSource):
    """Holds every order lookup until released, so two turns both load version N before saving."""

    def __init__(self, arrived: asyncio.Semaphore, release: asyncio.Event):
        super().__init__(REPO / "data")
        self.arrived, self.release = arrived, release

    async def get_order(self, order_id: str) -> dict[str, Any] | None:
        self.arrived.release()
        await self.release.wait()
        return await super().get_order(order_id)


async def test_concurrent_turns_on_one_session_lose_no_update(db_url: str) -> None:
    arrived, release = asyncio.Semaphore(0), asyncio.Event()
    data = GatedData(arrived, release)
    # Two routers stand for two worker processes: no shared in-process lock, only the database.
    live = CollectingSink()
    app_a = build_app(REPO / "config", REPO / "data", db_url, data_source=data, telemetry=live)
    app_b = build_app(REPO / "config", REPO / "data", db_url, data_source=data, telemetry=live)
    a, b = app_a.router, app_b.router
    await say(a, "hello there, how are you", session="race")  # creates the session (version 1)
    turn_a = asyncio.create_task(say(a, "track O-12345", session="race"))
    turn_b = asyncio.create_task(say(b, "track O-23456", session="race"))
    await arrived.acquire()
    await arrived.acquire()  # both turns loaded version 1 and are inside their tool
    release.set()
    (ra, _), (rb, _) = await asyncio.gather(turn_a, turn_b)
    assert "shipped" in ra.text and "delivered" in rb.text
    version = await rows(app_a, "SELECT version FROM sessions WHERE id = 'race'")
    assert version[0].version == 3  # 1 + both turns; the loser reloaded and re-ran on version 2
    users = await rows(app_a, "SELECT text FROM messages WHERE session_id = 'race' AND role = 'user' ORDER BY id")
    assert sorted(u.text for u in users) == ["hello there, how are you", "track O-12345", "track O-23456"]
    attempts = sorted(sum(e.stage == "received" for e in live.for_interaction(r.interaction_id)) for r in (ra, rb))
    assert attempts == [1, 2]  # the loser of the race ran again on the winner's state
    stored = await rows(app_a, "SELECT count(*) AS n FROM telemetry_events WHERE stage = 'received'")
    assert stored[0].n == 3  # the losing attempt rolled back; only committed turns are stored
    await app_a.aclose()
    await app_b.aclose()


async def test_retry_after_conflict_does_not_deliver_the_pre_message_twice(db_url: str) -> None:
    arrived, release = asyncio.Semaphore(0), asyncio.Event()
    data = GatedData(arrived, release)
    app_a = build_app(REPO / "config", REPO / "data", db_url, data_source=data)
    app_b = build_app(REPO / "config", REPO / "data", db_url, data_source=data)
    a, b = app_a.router, app_b.router
    await say(a, "hi there friend", session="dup")
    ta = asyncio.create_task(say(a, "track O-12345", session="dup"))
    tb = asyncio.create_task(say(b, "track O-12345", session="dup"))
    await arrived.acquire()
    await arrived.acquire()
    release.set()
    results = await asyncio.gather(ta, tb)
    for _, delivered in results:
        assert [m.kind for m in delivered] == ["pre", "answer"]
    await app_a.aclose()
    await app_b.aclose()


async def test_locked_database_gives_a_clear_message_and_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "locked.db"
    url = f"sqlite+aiosqlite:///{db}"
    settings = tmp_path / "config"
    settings.mkdir()
    for name in ("intents.yaml", "agents.yaml"):
        (settings / name).write_text((REPO / "config" / name).read_text())
    (settings / "settings.yaml").write_text("db_busy_timeout_ms: 100\n")
    async with build_app(settings, REPO / "data", url) as app:
        router = app.router
        await say(router, "hi there", session="warm")  # creates the schema
        holder = sqlite3.connect(db)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            response, delivered = await say(router, "track O-12345", session="locked")
        finally:
            holder.rollback()
            holder.close()
        assert "couldn't save our conversation" in response.text
        assert delivered[-1].kind == "error"
        assert await rows(app, "SELECT * FROM sessions WHERE id = 'locked'") == []
        assert await rows(app, "SELECT * FROM messages WHERE session_id = 'locked'") == []
        again, _ = await say(router, "track O-12345", session="locked")
        assert "shipped" in again.text


def test_a_turns_events_are_checked_and_typed_models() -> None:
    turn = Turn(interaction("hello"), "s-1", CollectingSink(), Redactor())
    event = turn.emit("received", {"text": "hello"})
    assert event.model_fields_set == set(TelemetryEvent.model_fields)
    assert event.timestamp.tzinfo is UTC and event.level == "info" and event.duration_ms >= 0
    assert TelemetryEvent.model_validate_json(event.model_dump_json()) == event
    with pytest.raises(ValueError, match="'info', 'warn' or 'error'"):
        turn.emit("received", level="debug")
    assert [e.stage for e in turn.events] == ["received"]  # the refused event was not kept
