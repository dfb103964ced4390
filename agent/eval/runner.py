"""Runs conversation suites through a real router and checks every expectation."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field

from agent.eval.suite import Expect, Scenario, Suite, summary
from agent.eval.suite import Turn as SuiteTurn
from agent.interfaces import TelemetrySink
from agent.router import AgentRouter
from agent.types import AgentResponse, ChannelContext, Interaction, OutboundMessage, TelemetryEvent, utcnow

# Builds a router on the suite's database; called again for `restart: true`.
RouterFactory = Callable[[TelemetrySink], Awaitable[AgentRouter]]


class Failure(BaseModel):
    turn: int
    key: str
    expected: Any
    got: Any


class ScenarioResult(BaseModel):
    id: str
    suite: str
    passed: bool
    turns: int
    failures: list[Failure] = Field(default_factory=list)


class _Events:
    def __init__(self) -> None:
        self.events: list[TelemetryEvent] = []

    def record(self, event: TelemetryEvent) -> None:
        self.events.append(event)


def check(expect: Expect, response: AgentResponse, stages: list[str], turn: int) -> list[Failure]:
    """Compare one turn's outcome with what the suite expected; return the mismatches."""
    executed = [r.tool for r in response.tool_results if r.error_code not in ("policy_denied", "policy_escalated")]
    pre_first = "plan_communicated" in stages and (
        "tool_execute" not in stages or stages.index("plan_communicated") < stages.index("tool_execute")
    )
    got: dict[str, Any] = {
        "intent": response.intent_id,
        "needs_input": response.needs_user_input,
        "asks_for": response.missing_param,
        "tools": executed,
        "pre_message": pre_first and any(m.kind == "pre" for m in response.messages),
        "active_goal": response.active_goal,
        "goal_stack": response.goal_stack,
        "handoff": response.handoff,
        "stages": stages,
        "confirmation": response.confirmation,
        "alerts": response.alerts,
    }
    failures = [
        Failure(turn=turn, key=key, expected=getattr(expect, key), got=got[key])
        for key in sorted(expect.given() & got.keys())
        if getattr(expect, key) != got[key]
    ]
    text = response.text.lower()
    failures += [
        Failure(turn=turn, key="reply_contains", expected=s, got=response.text)
        for s in expect.reply_contains
        if s.lower() not in text
    ]
    failures += [
        Failure(turn=turn, key="reply_not_contains", expected=s, got=response.text)
        for s in expect.reply_not_contains
        if s.lower() in text
    ]
    return failures


async def admin_turn(
    router: AgentRouter,
    turn: SuiteTurn,
    interaction: Interaction,
    reply: Callable[[OutboundMessage], Awaitable[None]],
    delivered: list[OutboundMessage],
) -> AgentResponse:
    """An admin's claim or release, or the re-alert sweep, summed up like a turn for `check`."""
    session = interaction.session_key
    alerts: list[str] = []
    text = ""
    if turn.action == "realert":
        wait = turn.after_seconds
        if wait is None:
            wait = router.p.settings.handoff_realert_seconds + 1
        sent = await router.realert_unclaimed(now=utcnow() + timedelta(seconds=wait))
        alerts = [a.kind for a in sent if a.session_id == session]
    else:
        text = await router.control(session, turn.action, "admin", reply)  # type: ignore[arg-type]
    state, _ = await router.p.store.load(session, 0)
    return AgentResponse(
        text=text,
        session_id=session,
        interaction_id=interaction.id,
        handoff=bool(state and state.handoff and state.handoff.active),
        messages=list(delivered),
        alerts=alerts,
    )


async def run_scenario(suite: str, scenario: Scenario, factory: RouterFactory) -> ScenarioResult:
    sink = _Events()
    router = await factory(sink)
    session = f"eval:{suite}:{scenario.id}:{uuid.uuid4().hex[:8]}"
    failures: list[Failure] = []
    turns = 0
    try:
        for n, turn in enumerate(scenario.turns, start=1):
            if turn.restart:
                await router.aclose()
                router = await factory(sink)
                continue
            turns += 1
            interaction = Interaction(
                id=f"{session}:{n}",
                text=turn.user or (turn.action or "").capitalize(),
                session_key=session,
                customer_id=scenario.customer,
                context=ChannelContext(channel_type=scenario.channel, user=scenario.customer or "guest"),
                action=turn.action if turn.action in ("confirm", "cancel") else None,
            )
            delivered: list[OutboundMessage] = []

            async def reply(m: OutboundMessage, out: list[OutboundMessage] = delivered) -> None:
                out.append(m)

            if turn.action in ("claim", "release", "realert"):
                response = await admin_turn(router, turn, interaction, reply, delivered)
            else:
                response = await router.handle(interaction, reply=reply)
            if delivered != response.messages:
                failures.append(Failure(turn=n, key="delivery", expected=response.messages, got=delivered))
            stages = [e.stage for e in sink.events if e.interaction_id == interaction.id]
            failures += check(turn.expect, response, stages, n)
    finally:
        await router.aclose()
    return ScenarioResult(id=scenario.id, suite=suite, passed=not failures, turns=turns, failures=failures)


async def run_suites(suites: list[Suite], factory: RouterFactory) -> tuple[list[ScenarioResult], dict[str, Any]]:
    results = [await run_scenario(s.name, sc, factory) for s in suites for sc in s.scenarios]
    return results, summary(results)
