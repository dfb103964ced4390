"""A store of one's own: the app built on an in-memory `Storage` that declares what it provides.

The store below is written here, against the Protocols in agent/storage.py and agent/sources.py only: sessions,
task lists, tickets, refund counts, what the bot changed about orders and the demo's first day. It keeps no
inbox, outbox, spend, preferences or database, and says so by leaving them None. A refund, a
task and a ticket conversation run through the real router and the real tools on it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import date, datetime
from typing import Any

import pytest

from agent.app import App
from agent.conversation.session import SessionState
from agent.domain.records import TaskRecord, TicketRecord, TurnRecord
from agent.domain.types import Message, ToolResult
from agent.errors import VersionConflict
from agent.storage import Storage
from bots.app import build_app
from tests.helpers import REPO, interaction, say


class MemoryStore:
    """SessionStore, TaskReader, TicketReader, RefundHistory, OrderUpdates and DemoData in dicts."""

    def __init__(self) -> None:
        self.sessions: dict[str, tuple[int, str]] = {}  # id -> (version, state as JSON)
        self.messages: dict[str, list[Message]] = {}
        self.ledger: dict[str, ToolResult] = {}
        self.tasks: dict[str, dict[str, Any]] = {}
        self.tickets: dict[str, dict[str, Any]] = {}
        self.refunds: dict[str, dict[str, Any]] = {}
        self.order_updates: dict[str, dict[str, Any]] = {}
        self.started_on: date | None = None

    # SessionStore

    async def load(self, session_id: str, history_limit: int) -> tuple[SessionState | None, list[Message]]:
        saved = self.sessions.get(session_id)
        state = SessionState.model_validate_json(saved[1]) if saved else None
        history = self.messages.get(session_id, [])
        return state, (history[-history_limit:] if history_limit else [])

    async def commit(self, turn: TurnRecord) -> None:
        sid = turn.state.session_id
        version = self.sessions[sid][0] if sid in self.sessions else 0
        if version != turn.expected_version:
            raise VersionConflict(sid, turn.expected_version)
        self.sessions[sid] = (turn.state.version, turn.state.model_dump_json())
        self.messages.setdefault(sid, []).extend(turn.messages)
        for key, result in turn.ledger.items():
            self.ledger.setdefault(key, result)
        for effect in turn.effects:
            if effect.kind == "task":
                self.tasks.setdefault(effect.key, {k: effect.data[k] for k in TaskRecord.model_fields})
            elif effect.kind == "task_change":
                self.tasks[effect.key].update({k: effect.data[k] for k in ("title", "status") if k in effect.data})
            elif effect.kind == "ticket":
                self.tickets.setdefault(effect.key, dict(effect.data))
            elif effect.kind == "refund":
                self.refunds.setdefault(effect.key, dict(effect.data))
            elif effect.kind == "order_update":
                self.order_updates[effect.key] = dict(effect.data)

    async def ledger_get(self, key: str) -> ToolResult | None:
        return self.ledger.get(key)

    async def aclose(self) -> None:
        pass

    # TaskReader

    async def list_tasks(self, owner: str) -> list[TaskRecord]:
        mine = [t for t in self.tasks.values() if t["owner"] == owner and t["status"] != "deleted"]
        return [TaskRecord.model_validate(t) for t in sorted(mine, key=lambda t: t["number"])]

    async def next_task_number(self, owner: str) -> int:
        return max((t["number"] for t in self.tasks.values() if t["owner"] == owner), default=0) + 1

    # TicketReader

    async def tickets_of(self, customer_id: str | None, session_id: str, limit: int) -> list[TicketRecord]:
        mine = [
            t
            for t in self.tickets.values()
            if (t["customer_id"] == customer_id if customer_id else t["session_id"] == session_id)
        ]
        newest = sorted(mine, key=lambda t: t["created_at"], reverse=True)[:limit]
        return [TicketRecord.model_validate({k: t[k] for k in TicketRecord.model_fields}) for t in newest]

    # RefundHistory and OrderUpdates

    async def count_refunds(self, customer_id: str, since: datetime) -> int:
        return sum(
            1
            for r in self.refunds.values()
            if r["customer_id"] == customer_id and datetime.fromisoformat(r["created_at"]) >= since
        )

    async def order_update(self, order_id: str) -> dict[str, Any] | None:
        return self.order_updates.get(order_id)

    async def updates_of(self, order_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        return {i: self.order_updates[i] for i in order_ids if i in self.order_updates}

    # DemoData

    async def demo_started_on(self, today: date) -> date:
        self.started_on = self.started_on or today
        return self.started_on

    async def reset_demo(self) -> int:
        dropped = len(self.refunds) + len(self.order_updates)
        self.refunds.clear()
        self.order_updates.clear()
        self.started_on = None
        return dropped


@pytest.fixture
async def memory() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
async def app(memory: MemoryStore) -> AsyncIterator[App]:
    storage = Storage(sessions=memory, tasks=memory, tickets=memory, refunds=memory, orders=memory, demo=memory)
    async with build_app(REPO / "config", REPO / "data", storage=storage, env={"AGENTBOT_TRACING": "off"}) as built:
        yield built


async def test_a_refund_runs_on_a_store_of_ones_own(app: App, memory: MemoryStore) -> None:
    asked, delivered = await say(app.router, "refund order o-23456 please", customer="C-001")
    assert "Refund ฿3,290 for order O-23456?" in asked.text
    assert delivered[-1].buttons == ["confirm", "cancel"]
    assert memory.refunds == {}  # nothing moves before the customer says yes

    confirm = interaction("Confirm", customer="C-001").model_copy(update={"action": "confirm"})
    done = await app.router.handle(confirm)
    again = await app.router.handle(confirm.model_copy(update={"id": "i-retry"}))  # a second click
    status, _ = await say(app.router, "where is O-23456?", customer="C-001")

    assert "I've refunded ฿3,290 for order O-23456" in done.text
    assert done.tool_results[0].success and again.tool_results[0].replayed and again.text == done.text
    assert [(r["order_id"], r["amount"], r["customer_id"]) for r in memory.refunds.values()] == [
        ("O-23456", 3290.0, "C-001")
    ]
    assert "was refunded" in status.text  # the store's order update laid over the data
    twice, _ = await say(app.router, "refund order o-23456 please", customer="C-001")
    assert "already been refunded" in twice.text and len(memory.refunds) == 1  # the policy reads it too
    state, history = await memory.load("s-1", 20)
    assert state is not None and [m.text for m in history][:1] == ["refund order o-23456 please"]


async def test_a_task_list_runs_on_a_store_of_ones_own(app: App, memory: MemoryStore) -> None:
    first, _ = await say(app.router, "add a task to call the bank", customer="C-001")
    second, _ = await say(app.router, "add a task to file taxes", customer="C-001")
    done, _ = await say(app.router, "mark 1 as done", customer="C-001")
    listed, _ = await say(app.router, "what's on my list", customer="C-001")
    others, _ = await say(app.router, "what's on my list", session="s-2", customer="C-002")

    assert "task 1: call the bank" in first.text and "task 2: file taxes" in second.text  # numbered by the store
    assert "Task 1 (call the bank) is marked as done" in done.text
    assert "1. call the bank (done)" in listed.text and "2. file taxes" in listed.text
    assert "empty" in others.text  # tasks belong to their owner
    rows = sorted((t["owner"], t["number"], t["title"], t["status"]) for t in memory.tasks.values())
    assert rows == [("C-001", 1, "call the bank", "done"), ("C-001", 2, "file taxes", "open")]


async def test_tickets_are_asked_after_on_a_store_of_ones_own(app: App, memory: MemoryStore) -> None:
    none_yet, _ = await say(app.router, "is anyone dealing with my complaint?", customer="C-001")
    opened, _ = await say(app.router, "open a ticket: the keyboard's space bar sticks", customer="C-001")
    asked, _ = await say(app.router, "any word on my ticket?", session="s-2", customer="C-001")
    others, _ = await say(app.router, "any word on my ticket?", session="s-3", customer="C-002")

    assert "I see no tickets from you" in none_yet.text
    (ticket,) = memory.tickets.values()
    assert ticket["id"] in opened.text and ticket["id"] in asked.text  # from another conversation too
    assert "space bar sticks" in asked.text and "is open" in asked.text and "can't see their notes" in asked.text
    assert "I see no tickets from you" in others.text  # tickets belong to their customer
    assert len(memory.tickets) == 1  # asking opened nothing


async def test_what_the_store_leaves_out_is_declared_not_guessed(app: App) -> None:
    assert app.storage.inbox is None and app.storage.database is None
