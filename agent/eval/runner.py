"""Runs conversation suites through a real router and checks every expectation."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field

from agent.app import App
from agent.context.telemetry import TelemetrySink
from agent.conversation.session import SessionState
from agent.domain.records import TelemetryEvent
from agent.domain.types import AgentResponse, ChannelContext, Interaction, OutboundMessage, utcnow
from agent.eval.checks import Failure, check
from agent.eval.judge import judge
from agent.eval.metrics import ScenarioMetrics, TurnObservation, scenario_metrics
from agent.eval.suite import Scenario, Suite, SuiteTurn, summary
from agent.llm.calls import LLM_STAGES
from agent.llm.models import Usage
from agent.llm.provider import LLMProvider

# Builds the app on the suite's database: once per run, and again for a `restart: true` turn.
AppFactory = Callable[[TelemetrySink], Awaitable[App]]
# Called after each scenario with (done, total, "suite/scenario"): the CLI draws a progress bar.
Progress = Callable[[int, int, str], None]


class ScenarioResult(BaseModel):
    id: str
    suite: str
    passed: bool
    turns: int
    failures: list[Failure] = Field(default_factory=list)
    metrics: ScenarioMetrics | None = None
    judge_reasons: str | None = None
    # LLM use per turn ({"turn", "calls", "tokens_in", "tokens_out", "cost"}) and in total.
    llm_turns: list[dict[str, Any]] = Field(default_factory=list)
    llm: dict[str, Any] = Field(default_factory=dict)


def llm_usage(events: list[TelemetryEvent]) -> dict[str, Any]:
    """Calls, HTTP requests (retries included), tokens and dollars of the `llm_call` events given
    (failed calls count as calls), and how many model answers the product replaced with its rules'."""
    calls = [e.payload for e in events if e.stage == "llm_call"]
    return {
        "calls": len(calls),
        "fallbacks": sum(
            e.stage == "llm_fallback" or (e.stage == "llm_decision" and e.payload.get("decision") == "fallback")
            for e in events
        ),
        "requests": sum(c.get("attempts", 1) for c in calls),
        "tokens_in": sum(c.get("tokens_in", 0) for c in calls),
        "tokens_out": sum(c.get("tokens_out", 0) for c in calls),
        "cost": round(sum(c.get("cost", 0.0) for c in calls), 8),
    }


class TurnEvents:
    """The run's telemetry sink: events kept by interaction until the runner takes a turn's."""

    def __init__(self) -> None:
        self._by_turn: dict[str, list[TelemetryEvent]] = {}

    def record(self, event: TelemetryEvent) -> None:
        self._by_turn.setdefault(event.interaction_id, []).append(event)

    def take(self, interaction_id: str) -> list[TelemetryEvent]:
        return self._by_turn.pop(interaction_id, [])


async def admin_turn(
    app: App,
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
            wait = app.settings.handoff_realert_seconds + 1
        sent = await app.router.realert_unclaimed(now=utcnow() + timedelta(seconds=wait))
        alerts = [a.kind for a in sent if a.session_id == session]
    else:
        text = await app.router.control(session, turn.action, "admin", reply)  # type: ignore[arg-type]
    state, _ = await app.store.load(session, 0)
    return AgentResponse(
        text=text,
        session_id=session,
        interaction_id=interaction.id,
        handoff=bool(state and state.handoff and state.handoff.active),
        messages=list(delivered),
        alerts=alerts,
    )


def _llm_usage(events: list[TelemetryEvent]) -> Usage:
    total = Usage()
    for e in events:
        if isinstance(llm := e.payload.get("llm"), dict):
            step = Usage.model_validate(llm)
            total = Usage(
                calls=total.calls + step.calls,
                tokens_in=total.tokens_in + step.tokens_in,
                tokens_out=total.tokens_out + step.tokens_out,
                cost=total.cost + step.cost,
                latency_ms=total.latency_ms + step.latency_ms,
                errors=total.errors + step.errors,
            )
    return total


async def run_scenario(
    suite: str,
    scenario: Scenario,
    factory: AppFactory,
    judge_provider: LLMProvider | None = None,
    shared: tuple[App, TurnEvents] | None = None,
    run_id: str | None = None,
) -> ScenarioResult:
    """Run one scenario in a session of its own.

    Args:
        shared: the run's app and its sink; None builds an app for this scenario alone. A restart
            turn always builds a new app on the same database, as a new process would.
        run_id: names the run's sessions; the ids tools derive from them (tickets, handoffs,
            refunds) are the same whenever the same run_id is replayed. Default: a fresh one.
    """
    app, sink = shared or (None, TurnEvents())
    own = app is None
    if app is None:
        app = await factory(sink)
    if app.storage.demo is not None:
        # The run's scenarios share one database: each starts from the demo data as shipped, not
        # from what an earlier scenario refunded, as it would on a database of its own.
        await app.storage.demo.reset_demo()
    run = _ScenarioRun(suite, scenario, f"eval:{suite}:{scenario.id}:{run_id or uuid.uuid4().hex[:8]}", sink)
    try:
        for n, turn in enumerate(scenario.turns, start=1):
            if turn.restart:
                if own:
                    await app.aclose()
                app, own = await factory(sink), True
                continue
            await run.play(app, n, turn)
    finally:
        if own:
            await app.aclose()
    return await run.result(judge_provider)


class _ScenarioRun:
    """One scenario's session: plays its turns and keeps what each of them left behind."""

    def __init__(self, suite: str, scenario: Scenario, session: str, sink: TurnEvents) -> None:
        self.suite = suite
        self.scenario = scenario
        self.session = session
        self.sink = sink
        self.turns = 0
        self.failures: list[Failure] = []
        self.observed: list[TurnObservation] = []
        self.transcript: list[tuple[str, str]] = []
        self.llm_turns: list[dict[str, Any]] = []
        self.state: SessionState | None = None

    async def play(self, app: App, n: int, turn: SuiteTurn) -> None:
        """Send turn `n`, check what came back against its expectations and note what it cost."""
        self.turns += 1
        interaction = self._interaction(n, turn)
        started = time.perf_counter()
        response, delivered = await self._send(app, n, turn, interaction)
        latency_ms = (time.perf_counter() - started) * 1000
        events = self.sink.take(interaction.id)
        self.llm_turns.append({"turn": n} | llm_usage(events))
        failures = _turn_failures(n, turn, response, delivered, events)
        self.failures += failures
        self.state, _ = await app.store.load(self.session, 0)
        self.observed.append(
            TurnObservation(
                turn=n,
                latency_ms=round(latency_ms, 3),
                tools=[r.tool for r in response.tool_results],
                expected=sorted(turn.expect.given()),
                failed=sorted({f.key for f in failures}),
                fallback=any(m.kind == "fallback" for m in response.messages),
                handoff=response.handoff,
                goals_done=sum(1 for g in self.state.every_goal if g.status == "done") if self.state else 0,
                llm=_llm_usage(events),
            )
        )
        self.transcript += [("user", interaction.text), ("assistant", response.text)]

    def _interaction(self, n: int, turn: SuiteTurn) -> Interaction:
        scenario = self.scenario
        return Interaction(
            id=f"{self.session}:{n}",
            text=turn.user or (turn.action or "").capitalize(),
            session_key=self.session,
            customer_id=scenario.customer,
            context=ChannelContext(channel_type=scenario.channel, user=scenario.customer or "guest"),
            action=turn.action if turn.action in ("confirm", "cancel") else None,
        )

    async def _send(
        self, app: App, n: int, turn: SuiteTurn, interaction: Interaction
    ) -> tuple[AgentResponse, list[OutboundMessage]]:
        """The turn's response and the messages the channel was handed while it ran."""
        delivered: list[OutboundMessage] = []

        async def reply(m: OutboundMessage) -> None:
            delivered.append(m)

        # The interaction's id names the run, scenario and turn: recorded LLM calls are keyed by it.
        if turn.action in ("claim", "release", "realert"):
            return await admin_turn(app, turn, interaction, reply, delivered), delivered
        return await app.router.handle(interaction, reply=reply), delivered

    async def result(self, judge_provider: LLMProvider | None) -> ScenarioResult:
        """The scenario's verdict, metrics and LLM use; the judge scores the transcript when given."""
        totals = {k: sum(t[k] for t in self.llm_turns) for k in ("calls", "tokens_in", "tokens_out", "cost")}
        totals["cost"] = round(totals["cost"], 8)
        metrics = scenario_metrics(self.observed, self.state, passed=not self.failures)
        reasons = None
        if judge_provider is not None and self.transcript:
            verdict = await judge(judge_provider, self.transcript, self.scenario.rubric)
            metrics.judge, reasons = verdict.score, verdict.reasons
        return ScenarioResult(
            id=self.scenario.id,
            suite=self.suite,
            passed=not self.failures,
            turns=self.turns,
            failures=self.failures,
            metrics=metrics,
            judge_reasons=reasons,
            llm_turns=self.llm_turns,
            llm=totals,
        )


def _turn_failures(
    n: int, turn: SuiteTurn, response: AgentResponse, delivered: list[OutboundMessage], events: list[TelemetryEvent]
) -> list[Failure]:
    """What turn `n` got wrong: messages the channel saw but the response did not list, or the reverse,
    and the turn's own expectations."""
    failures: list[Failure] = []
    if delivered != response.messages:
        failures.append(Failure(turn=n, key="delivery", expected=response.messages, got=delivered))
    # LLM events describe work inside a stage; the pipeline's stage order is what suites check.
    stages = [e.stage for e in events if e.stage not in LLM_STAGES]
    return failures + check(turn.expect, response, stages, n)


async def run_suites(
    suites: list[Suite],
    factory: AppFactory,
    *,
    progress: Progress | None = None,
    judge_provider: LLMProvider | None = None,
    run_id: str | None = None,
) -> tuple[list[ScenarioResult], dict[str, Any]]:
    """Run every scenario of `suites` on one app built by `factory`, each in a fresh session."""
    todo = [(s.name, sc) for s in suites for sc in s.scenarios]
    results: list[ScenarioResult] = []
    sink = TurnEvents()
    app = await factory(sink)
    try:
        for name, sc in todo:
            results.append(await run_scenario(name, sc, factory, judge_provider, shared=(app, sink), run_id=run_id))
            if progress is not None:
                progress(len(results), len(todo), f"{name}/{sc.id}")
    finally:
        await app.aclose()
    return results, summary(results)


def llm_totals(results: list[ScenarioResult]) -> dict[str, Any]:
    """LLM calls, tokens and dollars over every scenario."""
    llm = {k: sum(r.llm.get(k, 0) for r in results) for k in ("calls", "tokens_in", "tokens_out", "cost")}
    llm["cost"] = round(llm["cost"], 8)
    return llm
