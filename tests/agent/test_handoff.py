"""Handoff through the router: admin alert after commit, silence, claim and release; thread seeding."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from agent.app import App
from agent.domain.types import Alert, Message, OutboundMessage
from bots.alerts import AlertFanout
from bots.app import build_app
from tests.helpers import REPO, interaction, say


class Recorder:
    """An admin channel that keeps what it was sent."""

    def __init__(self) -> None:
        self.alerts: list[Alert] = []

    async def notify(self, alert: Alert) -> None:
        self.alerts.append(alert)


class Broken:
    async def notify(self, alert: Alert) -> None:
        raise ConnectionError("admin channel down")


async def test_handoff_alerts_admins_with_the_last_messages(db_url: str) -> None:
    admins = Recorder()
    async with build_app(REPO / "config", REPO / "data", db_url, alerts=AlertFanout([Broken(), admins])) as app:
        router = app.router
        await say(router, "where is O-99999", customer="C-001")
        response, _ = await say(router, "I want to talk to a human", customer="C-001")
        assert response.handoff and response.alerts == ["handoff"]
        again, _ = await say(router, "hello? I still need a person", customer="C-001")
    assert [a.kind for a in admins.alerts] == ["handoff"]  # the broken channel did not stop this one
    alert = admins.alerts[0]
    assert "C-001" in alert.summary
    assert any("O-99999" in m for m in alert.details["last_messages"])
    assert again.alerts == [] and again.tool_results == []


async def test_claim_silences_and_release_gives_the_conversation_back(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        router = app.router
        await say(router, "get me a real person", customer="C-001")
        waiting, _ = await say(router, "anyone there?", customer="C-001")
        assert "asked to join" in waiting.text
        assert (
            await router.control("s-1", "claim", "Dana")
            == "Dana from our support team has joined and will take it from here."
        )
        silent, delivered = await say(router, "thanks Dana, where is O-12345?", customer="C-001")
        assert delivered == [] and silent.tool_results == [] and silent.handoff
        assert "back in this conversation" in await router.control("s-1", "release", "Dana")
        back, _ = await say(router, "where is O-12345?", customer="C-001")
        assert not back.handoff and "shipped" in back.text
        assert await router.control("s-1", "release", "Dana") == "There is no open handoff in this conversation."
        stored = await app.store.fetch(  # type: ignore[attr-defined]
            "SELECT text FROM messages WHERE session_id = 's-1' AND role = 'user' ORDER BY id"
        )
    assert [r.text for r in stored][-2] == "thanks Dana, where is O-12345?"  # kept for the human to read


async def test_a_cold_start_in_an_existing_thread_is_seeded_from_it(db_url: str) -> None:
    thread = [
        Message(role="user", text="I want to check my order"),
        Message(role="agent", kind="question", text="What's your order ID? Order IDs look like O-12345."),
    ]
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        router = app.router
        first = interaction("thanks. also, can you open a ticket", session="thread-1")
        first = first.model_copy(update={"thread_history": thread})
        await router.handle(first)
        rows = await app.store.fetch(  # type: ignore[attr-defined]
            "SELECT role, text FROM messages WHERE session_id = 'thread-1' ORDER BY id"
        )
    assert [(r.role, r.text) for r in rows][:3] == [
        ("user", "I want to check my order"),
        ("agent", "What's your order ID? Order IDs look like O-12345."),
        ("user", "thanks. also, can you open a ticket"),
    ]


async def test_alert_fanout_dedupes_and_rate_limits() -> None:
    now = [0.0]
    admins = Recorder()
    fanout = AlertFanout([admins], dedupe_seconds=60, max_per_minute=2, clock=lambda: now[0])
    a = Alert(kind="provider_outage", session_id="s", summary="openai 503", dedupe_key="outage:openai")
    await fanout.notify(a)
    await fanout.notify(a)
    assert len(admins.alerts) == 1
    now[0] = 61
    await fanout.notify(a)
    for n in range(3):
        await fanout.notify(Alert(kind="provider_outage", session_id=f"s{n}", summary="x"))
    assert len(admins.alerts) == 3  # two in the minute after t=61, the third is dropped


async def escalated_refund(app: App, session: str) -> str:
    """C-003 (basic tier) asks for a refund over their limit: the policy holds it for a person."""
    response, _ = await say(app.router, "I need a refund for order O-67890", session=session, customer="C-003")
    assert response.alerts == ["policy_escalation"] and response.tool_results[0].error_code == "policy_escalated"
    saved, _ = await app.store.load(session, 0)
    assert saved is not None and saved.handoff is not None and saved.handoff.escalation is not None
    held = saved.handoff.escalation
    assert held.tool == "issue_refund" and held.params["order_id"] == "O-67890" and held.decision is None
    return held.id


async def refunds_of(app: App, order: str) -> list[str]:
    rows = await app.store.fetch(f"SELECT id FROM refunds WHERE order_id = '{order}'")  # type: ignore[attr-defined]
    return [r.id for r in rows]


async def test_an_approved_escalation_runs_once_and_the_thread_says_so(db_url: str) -> None:
    admins = Recorder()
    async with build_app(REPO / "config", REPO / "data", db_url, alerts=AlertFanout([admins])) as app:
        held = await escalated_refund(app, "s-esc")
        alert = admins.alerts[-1]
        assert alert.details["escalation_id"] == held and "approve" in alert.details["actions"]
        thread: list[OutboundMessage] = []

        async def reply(m: OutboundMessage) -> None:
            thread.append(m)

        told = await app.router.decide("s-esc", "approve", "Dana", escalation_id=held, reply=reply)
        assert "approved your request" in told and "refunded" in told
        again = await app.router.decide("s-esc", "approve", "Robin", escalation_id=held, reply=reply)
        assert again == "That action was already approved by Dana."
        assert [m.text for m in thread] == [told]  # the customer's thread heard it once
        assert len(await refunds_of(app, "O-67890")) == 1
        saved, history = await app.store.load("s-esc", 20)
        assert saved is not None and saved.handoff is not None and saved.handoff.status == "released"
        assert any(m.kind == "admin" and m.text.startswith("Dana: approve issue_refund") for m in history)
        back, _ = await say(app.router, "thanks! where is O-67890?", session="s-esc", customer="C-003")
        assert not back.handoff  # the bot has the conversation again


async def test_a_denied_escalation_runs_nothing_and_the_thread_says_why(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        held = await escalated_refund(app, "s-deny")
        thread: list[OutboundMessage] = []

        async def reply(m: OutboundMessage) -> None:
            thread.append(m)

        told = await app.router.decide(
            "s-deny", "deny", "Dana", escalation_id=held, reason="the blender was used for a year", reply=reply
        )
        assert told == "Our team could not approve your request: the blender was used for a year."
        assert [m.text for m in thread] == [told]
        assert await refunds_of(app, "O-67890") == []
        assert await app.router.decide("s-deny", "approve", "Robin") == "That action was already denied by Dana."
        assert await refunds_of(app, "O-67890") == []
        assert await app.router.decide("s-1", "approve", "Robin") == app.router.desk.messages.no_escalation


async def test_two_workers_approving_at_once_run_it_once(any_db_url: str) -> None:
    """Two processes (two apps on one database, each with its own session locks) approve the same
    escalation at the same moment: the optimistic commit lets one win; the other runs nothing."""
    async with (
        build_app(REPO / "config", REPO / "data", any_db_url) as one,
        build_app(REPO / "config", REPO / "data", any_db_url) as two,
    ):
        held = await escalated_refund(one, "s-two")
        told = await asyncio.gather(
            one.router.decide("s-two", "approve", "Dana", escalation_id=held),
            two.router.decide("s-two", "approve", "Robin", escalation_id=held),
        )
        assert sum("approved your request" in t for t in told) == 1, told
        assert any(t.startswith("That action was already approved by") for t in told), told
        assert len(await refunds_of(one, "O-67890")) == 1
        _, history = await one.store.load("s-two", 20)
        assert sum(m.kind == "admin" for m in history) == 1


async def test_an_undecided_escalation_is_realerted_with_its_approve_and_deny(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        held = await escalated_refund(app, "s-wait")
        later = datetime.now(UTC) + timedelta(hours=1)
        (again,) = await app.router.realert_unclaimed(later)
        assert again.kind == "policy_escalation" and again.details["escalation_id"] == held
        assert again.details["actions"] == ["claim", "approve", "deny"] and "Still unclaimed" in again.summary
        await app.router.decide("s-wait", "deny", "Dana")
        assert await app.router.realert_unclaimed(later + timedelta(hours=1)) == []  # decided: nothing waits
