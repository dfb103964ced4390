"""Runs conversation suites through a real router and checks every expectation."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, Field

from agent.eval.suite import Expect, Scenario, Suite, summary
from agent.interfaces import TelemetrySink
from agent.llm.calls import LLM_STAGES
from agent.router import AgentRouter
from agent.types import AgentResponse, ChannelContext, Interaction, OutboundMessage, TelemetryEvent

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
    # LLM use per turn ({"turn", "calls", "tokens_in", "tokens_out", "cost"}) and in total.
    llm_turns: list[dict[str, Any]] = Field(default_factory=list)
    llm: dict[str, Any] = Field(default_factory=dict)


def llm_usage(events: list[TelemetryEvent]) -> dict[str, Any]:
    """Calls, tokens and dollars of the `llm_call` events given (failed calls count as calls)."""
    calls = [e.payload for e in events if e.stage == "llm_call"]
    return {
        "calls": len(calls),
        "tokens_in": sum(c.get("tokens_in", 0) for c in calls),
        "tokens_out": sum(c.get("tokens_out", 0) for c in calls),
        "cost": round(sum(c.get("cost", 0.0) for c in calls), 8),
    }


class _Events:
    def __init__(self) -> None:
        self.events: list[TelemetryEvent] = []

    def record(self, event: TelemetryEvent) -> None:
        self.events.append(event)


def check(expect: Expect, response: AgentResponse, stages: list[str], turn: int) -> list[Failure]:
    """Compare one turn's outcome with what the suite expected; return the mismatches."""
    executed = [r.tool for r in response.tool_results if r.error_code != "policy_denied"]
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


async def run_scenario(suite: str, scenario: Scenario, factory: RouterFactory) -> ScenarioResult:
    sink = _Events()
    router = await factory(sink)
    session = f"eval:{suite}:{scenario.id}:{uuid.uuid4().hex[:8]}"
    failures: list[Failure] = []
    turns = 0
    llm_turns: list[dict[str, Any]] = []
    try:
        for n, turn in enumerate(scenario.turns, start=1):
            if turn.restart:
                await router.aclose()
                router = await factory(sink)
                continue
            turns += 1
            interaction = Interaction(
                id=f"{session}:{n}",
                text=turn.user or "",
                session_key=session,
                customer_id=scenario.customer,
                context=ChannelContext(channel_type=scenario.channel, user=scenario.customer or "guest"),
            )
            delivered: list[OutboundMessage] = []

            async def reply(m: OutboundMessage, out: list[OutboundMessage] = delivered) -> None:
                out.append(m)

            response = await router.handle(interaction, reply=reply)
            if delivered != response.messages:
                failures.append(Failure(turn=n, key="delivery", expected=response.messages, got=delivered))
            events = [e for e in sink.events if e.interaction_id == interaction.id]
            llm_turns.append({"turn": n} | llm_usage(events))
            # LLM events describe work inside a stage; the pipeline's stage order is what suites check.
            stages = [e.stage for e in events if e.stage not in LLM_STAGES]
            failures += check(turn.expect, response, stages, n)
    finally:
        await router.aclose()
    totals = {k: sum(t[k] for t in llm_turns) for k in ("calls", "tokens_in", "tokens_out", "cost")}
    totals["cost"] = round(totals["cost"], 8)
    return ScenarioResult(
        id=scenario.id,
        suite=suite,
        passed=not failures,
        turns=turns,
        failures=failures,
        llm_turns=llm_turns,
        llm=totals,
    )


async def run_suites(suites: list[Suite], factory: RouterFactory) -> tuple[list[ScenarioResult], dict[str, Any]]:
    results = [await run_scenario(s.name, sc, factory) for s in suites for sc in s.scenarios]
    return results, summary(results)


def llm_totals(results: list[ScenarioResult]) -> dict[str, Any]:
    """LLM calls, tokens and dollars over every scenario."""
    llm = {k: sum(r.llm.get(k, 0) for r in results) for k in ("calls", "tokens_in", "tokens_out", "cost")}
    llm["cost"] = round(llm["cost"], 8)
    return llm
