"""The YAML policy engine and confirmations through the real router, on a real SQLite file."""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import pytest

from adapters.data.json_source import JSONDataSource
from agent.conversation.session import SessionState
from agent.domain.contexts import PolicyContext
from agent.domain.types import Interaction, ToolCall, utcnow
from agent.errors import ConfigError
from agent.policy.engine import YamlPolicyEngine
from agent.policy.rules import load_policies
from bots.app import build_app
from tests.helpers import REPO, interaction, say


async def test_refund_happy_path_writes_one_row_and_marks_the_order(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        router = app.router
        asked, delivered = await say(router, "refund order o-23456 please", customer="C-001")
        assert asked.confirmation and asked.tool_results == []
        assert delivered[-1].buttons == ["confirm", "cancel"]
        assert "Refund ฿3,290 for order O-23456?" in asked.text
        confirm = interaction("Confirm", customer="C-001").model_copy(update={"action": "confirm"})
        done = await router.handle(confirm)
        again = await router.handle(confirm.model_copy(update={"id": "i-retry"}))  # a second click
        assert done.tool_results[0].success and not done.tool_results[0].replayed
        assert again.tool_results[0].replayed and again.text == done.text
        rows = await app.store.fetch("SELECT order_id, amount, customer_id, status FROM refunds")  # type: ignore[attr-defined]
        status, _ = await say(router, "where is O-23456?", customer="C-001")
    assert [tuple(r) for r in rows] == [("O-23456", 3290.0, "C-001", "issued")]
    assert "was refunded" in status.text


async def test_two_refunds_in_30_days_then_no_more(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        router = app.router
        for order in ("O-23456", "O-24680"):
            await say(router, f"refund {order}", session=order, customer="C-001")
            await say(router, "yes", session=order, customer="C-001")
        denied, _ = await say(router, "refund O-12345", session="third", customer="C-001")
        count = await app.store.fetch("SELECT count(*) AS n FROM refunds")  # type: ignore[attr-defined]
    assert count[0].n == 2
    assert "only delivered orders" in denied.text


async def test_counter_rule_denies_the_third_refund(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        router = app.router
        await say(router, "refund 10 baht for O-35791", session="a", customer="C-002")
        await say(router, "yes", session="a", customer="C-002")
        await say(router, "refund 10 baht for O-46802", session="b", customer="C-002")
        await say(router, "yes", session="b", customer="C-002")
        policy = app.policy
        ctx = PolicyContext(
            session=SessionState(session_id="c", customer_id="C-002"),
            intent_id="refund_request",
            agent="support",
            customer={"tier": "silver"},
        )
        # A delivered order of theirs that was never refunded: only the counter can refuse it.
        engine = YamlPolicyEngine(policy.policy, _Delivered(), policy.refunds)  # type: ignore[attr-defined]
        decision = await engine.validate(ToolCall(tool_name="issue_refund", params={"order_id": "O-99999"}), ctx)
    assert decision.rule == "refund_at_most_two_per_30_days" and not decision.allowed
    assert decision.violations == [
        "there have already been 2 refunds on your account in the last 30 days, and the limit is 2"
    ]
    assert decision.facts["counters.refunds_30d"] == 2


class _Delivered:
    async def get_order(self, order_id: str) -> dict:
        return {"order_id": order_id, "customer_id": "C-002", "status": "delivered", "amount": 40.0}

    async def get_customer(self, customer_id: str) -> None:
        return None

    async def find_customer(self, platform: str, user_id: str) -> None:
        return None


async def test_policy_decisions_are_telemetry_with_the_rule(db_url: str) -> None:
    from tests.standins.telemetry import CollectingSink

    sink = CollectingSink()
    async with build_app(REPO / "config", REPO / "data", db_url, telemetry=sink) as app:
        router = app.router
        await say(router, "refund O-12345", customer="C-001")
    checks = [e.payload for e in sink.events if e.stage == "policy_check"]
    assert checks[0]["rule"] == "refund_only_delivered" and checks[0]["allowed"] is False
    assert checks[0]["facts"]["order.status"] == "shipped"


async def test_an_expired_confirmation_does_not_run(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        router = app.router
        await say(router, "refund O-23456", customer="C-001")
        router.confirmations.clock = lambda: utcnow() + timedelta(hours=1)
        late, _ = await say(router, "yes", customer="C-001")
    assert late.tool_results == [] and not late.confirmation
    assert "waited too long" in late.text


async def test_confirm_with_nothing_open_changes_nothing(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        router = app.router
        click = Interaction(id="c-1", text="Confirm", session_key="s-1", action="confirm")
        response = await router.handle(click)
    assert response.tool_results == [] and "nothing waiting" in response.text


async def test_realert_sweep_uses_the_clock_not_sleep(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        router = app.router
        await say(router, "talk to a human", customer="C-003")
        assert await router.realert_unclaimed(now=utcnow() + timedelta(seconds=10)) == []
        later = utcnow() + timedelta(seconds=app.settings.handoff_realert_seconds + 5)
        first = await router.realert_unclaimed(now=later)
        assert [a.kind for a in first] == ["handoff"] and first[0].details["actions"] == ["claim"]
        assert "Still unclaimed" in first[0].summary
        assert await router.realert_unclaimed(now=later + timedelta(seconds=5)) == []
        await router.control("s-1", "claim", "Dana")
        assert await router.realert_unclaimed(now=later + timedelta(days=1)) == []
        rows = await app.store.fetch("SELECT status FROM handoff_queue")  # type: ignore[attr-defined]
        stages = await app.store.fetch(  # type: ignore[attr-defined]
            "SELECT stage FROM telemetry_events WHERE stage IN ('handoff_realerted', 'handoff_updated')"
        )
    assert [r.status for r in rows] == ["claimed"]
    assert [r.stage for r in stages] == ["handoff_realerted", "handoff_updated"]


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    d = tmp_path / "config"
    shutil.copytree(REPO / "config", d)
    return d


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("outcome: require_escalation", "outcome: escalate", "rule 'refund_over_tier_limit'"),
        ("{fact: order.status, ne: delivered}", "{fact: orders.status, ne: delivered}", "delivered'.*unknown fact"),
        ("{fact: counters.refunds_30d, gte: 2}", "{fact: counters.refunds_7d, gte: 2}", "unknown counter"),
        ("tools: [check_order_status]", "tools: [check_order_stat]", "unknown tool 'check_order_stat'"),
        ("{fact: params.amount, gt: {fact: order.amount}}", "{fact: params.amount}", "exactly one of"),
        (
            "{fact: params.amount, gt: {fact: limits.refund_limit}}",
            "{fact: params.amount, gt: {fact: limits.x}}",
            "no limit named 'x'",
        ),
    ],
)
def test_bad_policy_files_stop_startup_naming_the_rule(config_dir: Path, old: str, new: str, message: str) -> None:
    path = config_dir / "policies.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(ConfigError, match=message) as err:
        load_policies(path, {"issue_refund", "delete_task", "check_order_status"})
    assert "policies.yaml" in str(err.value)


async def test_a_tool_that_needs_a_yes_is_confirmed_whatever_the_rules_allow(tmp_path: Path) -> None:
    """Whether a tool needs the requester's yes is its own declaration, not a policy rule."""
    path = tmp_path / "policies.yaml"
    path.write_text("default: allow\nrules:\n  - {id: tickets_ok, tools: [create_ticket], outcome: allow}\n")
    policy = load_policies(path, {"create_ticket", "check_order_status"})
    data = JSONDataSource(REPO / "data")
    ctx = PolicyContext(session=SessionState(session_id="s", customer_id="C-001"), intent_id=None, agent="support")
    asks = YamlPolicyEngine(policy, data, approvals={"create_ticket", "check_order_status"})
    by_rule = await asks.validate(ToolCall(tool_name="create_ticket", params={"summary": "broken"}), ctx)
    by_default = await asks.validate(ToolCall(tool_name="check_order_status", params={"order_id": "O-12345"}), ctx)
    assert (by_rule.requires_confirmation, by_rule.rule) == (True, "tickets_ok")
    assert (by_default.requires_confirmation, by_default.rule) == (True, "needs_approval")
    plain = await YamlPolicyEngine(policy, data).validate(ToolCall(tool_name="create_ticket", params={}), ctx)
    assert plain.allowed and not plain.requires_confirmation
