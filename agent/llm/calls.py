"""Every LLM call of the core goes through `LLMCalls`: telemetry, cost, budgets and outage alerts.

One `llm_call` event per call carries the tokens, dollars, latency, attempts and retry sleeps of
that call, plus running totals for the turn and the session (the session's are kept in its state,
so they survive restarts and commit with the turn). Each call also counts toward the turn's usage,
which `Turn.emit` attaches to the stage that spent it.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from typing import Any

from agent.config.schema import LLMSettings
from agent.context.log import TurnLog
from agent.context.output import AlertNotifier
from agent.conversation.session import SessionState
from agent.domain.types import Alert, CoreAlert
from agent.errors import ProviderError, ProviderTimeout, ProviderUnavailable
from agent.llm.breaker import OUTAGE_KINDS, CircuitBreaker
from agent.llm.models import LLMRequest, LLMResponse
from agent.llm.provider import LLMProvider
from agent.llm.spend import DailyBudget

# Telemetry stages that describe LLM work inside a pipeline stage; they are not pipeline stages.
LLM_STAGES = frozenset(
    {
        "llm_call",
        "llm_decision",
        "llm_fallback",
        "grounding_violation",
        "llm_budget_exhausted",
        "history_fitted",
        "llm_skipped",
        "llm_circuit",
    }
)
ANSWER_SHARE = 0.1  # of the turn deadline, kept for answering without the model


class ProviderSkipped(ProviderUnavailable):
    """No request was made: the circuit is open, the turn's deadline passed, or the provider already
    failed this turn. Callers fall back to the rules exactly as for any outage."""

    def __init__(self, reason: str):
        super().__init__(f"LLM call skipped: {reason}")
        self.reason = reason
        self.attempts = 0


BUDGET_NOTICE = (
    "Heads-up: today's budget for AI assistance here is used up, so I'm answering with my basic "
    "rules until tomorrow. Simple requests like order status still work."
)


def _channel(state: SessionState, t: TurnLog | None) -> str:
    ctx = t.interaction.context if t else None
    return f"{state.channel_type.value}:{ctx.channel}" if ctx and ctx.channel else state.channel_type.value


class LLMCalls:
    """
    Args:
        provider: the model (already wrapped in the adapters' retry layer).
        settings: the `llm:` section of settings (temperature, window, prices come via provider).
        budget: daily spend limits; None means unlimited.
        alerts: where provider outages and spent budgets are reported to admins.
    """

    def __init__(
        self,
        provider: LLMProvider,
        settings: LLMSettings,
        budget: DailyBudget | None = None,
        alerts: AlertNotifier | None = None,
        breaker: CircuitBreaker | None = None,
    ):
        self.provider = provider
        self.settings = settings
        self.budget = budget
        self.alerts = alerts
        self.breaker = breaker or CircuitBreaker(
            settings.provider, settings.breaker.failures, settings.breaker.cooldown_seconds
        )

    def available(self, t: TurnLog | None) -> bool:
        """Whether a call would go out now (no open circuit, no outage this turn, time left)."""
        return self._skip_reason(t) is None and self.breaker.state != "open"

    def _skip_reason(self, t: TurnLog | None) -> str | None:
        # An outage that failed a call this turn would fail a second call the same way: none is made.
        if t is not None and t.decided.llm_down:
            return f"provider failed earlier this turn ({t.decided.llm_down})"
        if t is not None and t.decided.llm_deadline is not None and time.monotonic() >= t.decided.llm_deadline:
            return "turn deadline passed"
        return None

    def _remaining(self, t: TurnLog | None) -> float:
        if t is None:
            return self.settings.turn_deadline_seconds
        # LLM work stops a tenth early, so the rules' answer after a hung provider is in by the deadline.
        budget = self.settings.turn_deadline_seconds * (1 - ANSWER_SHARE)
        if t.decided.llm_deadline is None:
            t.decided.llm_deadline = time.monotonic() + budget
        return max(0.0, t.decided.llm_deadline - time.monotonic())

    async def _skip(self, purpose: str, reason: str, state: SessionState, t: TurnLog | None) -> ProviderSkipped:
        if t is not None:
            t.emit("llm_skipped", {"purpose": purpose, "reason": reason}, level="warn")
        return ProviderSkipped(reason)

    @property
    def context_window(self) -> int:
        return self.settings.context_window or self.provider.capabilities.context_window

    async def generate(self, purpose: str, state: SessionState, request: LLMRequest, t: TurnLog | None) -> LLMResponse:
        """Call the model at the settings' temperature (and answer length, unless the request sets
        one); record the call (or its failure) on the turn `t`. Raises ProviderError."""
        reason = await self._refusal(state, t)
        if reason is not None:
            raise await self._skip(purpose, reason, state, t)
        remaining = self._remaining(t)
        started = time.perf_counter()
        try:
            try:
                async with asyncio.timeout(remaining):
                    response = await self.provider.generate(self._limited(request, t))
            except TimeoutError as timeout:
                raise ProviderTimeout(f"the turn's LLM deadline ({remaining:.1f}s left) passed") from timeout
        except ProviderError as e:
            await self._failed(purpose, state, t, e, (time.perf_counter() - started) * 1000)
            raise
        await self._answered(purpose, state, t, response, (time.perf_counter() - started) * 1000)
        return response

    async def _refusal(self, state: SessionState, t: TurnLog | None) -> str | None:
        """Why no call goes out now (an outage this turn, the deadline, the budget, an open circuit), or None."""
        reason = self._skip_reason(t)
        if reason is None and self.budget is not None:
            # Checked before every call, not only at the start of the turn: another worker may
            # have spent the rest of today's budget meanwhile.
            spent = await self.budget.exhausted(state.customer_id, _channel(state, t))
            reason = f"daily budget spent for {spent[0]}" if spent else None
        if reason is None and not self.breaker.allow():
            reason = f"circuit open for {self.breaker.name}, next try in {self.breaker.retry_in:.0f}s"
        return reason

    async def _failed(
        self, purpose: str, state: SessionState, t: TurnLog | None, e: ProviderError, elapsed_ms: float
    ) -> None:
        if e.kind in OUTAGE_KINDS and t is not None:
            t.decided.llm_down = e.kind
        if self.breaker.failure(e.kind):
            await self._circuit_opened(state, t, e)
        if t is not None:
            t.usage.add(None, elapsed_ms, e.attempts)
            t.emit(
                "llm_call",
                {
                    "purpose": purpose,
                    "ok": False,
                    "error": e.kind,
                    "status": e.status,
                    "attempts": e.attempts,
                    "retry_delays": e.retry_delays,
                },
                level="error",
            )
        await self._alert_outage(state, purpose, e)

    async def _answered(
        self, purpose: str, state: SessionState, t: TurnLog | None, response: LLMResponse, elapsed_ms: float
    ) -> None:
        """Count the answer's cost toward the session, the budgets and the turn."""
        self.breaker.success()
        cost = response.cost or self.provider.get_cost(response.tokens_in, response.tokens_out)
        response.cost = cost
        session = self._add_usage(state, response)
        if self.budget is not None:
            await self.budget.add(state.customer_id, _channel(state, t), cost)
        if t is None:
            return
        t.usage.add(response, response.latency_ms or elapsed_ms)
        u = t.usage
        turn = {
            "calls": u.calls - u.errors,
            "requests": u.requests,
            "tokens_in": u.tokens_in,
            "tokens_out": u.tokens_out,
            "cost": u.cost,
        }
        t.emit(
            "llm_call",
            {
                "purpose": purpose,
                "ok": True,
                "model": response.model,
                "tokens_in": response.tokens_in,
                "tokens_out": response.tokens_out,
                "cost": round(cost, 8),
                "latency_ms": round(response.latency_ms, 1),
                "attempts": response.attempts,
                "retry_delays": response.retry_delays,
                "turn": turn,
                "session": session,
            },
        )

    def _limited(self, request: LLMRequest, t: TurnLog | None) -> LLMRequest:
        """The settings' temperature and answer length, and which call of the turn this is."""
        limit = request.max_tokens or self.settings.answer_reserve_tokens
        key = f"{t.interaction.id}/{t.usage.calls + 1}" if t is not None else request.call_key
        return replace(request, temperature=self.settings.temperature, max_tokens=limit, call_key=key)

    @staticmethod
    def _add_usage(state: SessionState, r: LLMResponse) -> dict[str, Any]:
        usage = state.llm_usage
        usage.calls += 1
        usage.tokens_in += r.tokens_in
        usage.tokens_out += r.tokens_out
        usage.cost = round(usage.cost + r.cost, 8)
        return usage.model_dump()

    async def over_budget(self, state: SessionState, t: TurnLog | None) -> bool:
        """True when today's budget for this customer or channel is spent (admins are told)."""
        if self.budget is None:
            return False
        found = await self.budget.exhausted(state.customer_id, _channel(state, t))
        if found is None:
            return False
        key, spent = found
        if t is not None and state.llm_budget_notice_day != self.budget.day:
            t.emit("llm_budget_exhausted", {"key": key, "spent": round(spent, 6)}, level="warn")
        if self.alerts is not None:
            await self.alerts.notify(
                Alert(
                    kind=CoreAlert.LLM_BUDGET,
                    session_id=state.session_id,
                    summary=f"Daily LLM budget spent for {key}; that traffic now uses rules mode.",
                    details={"key": key, "day": self.budget.day},
                    dedupe_key=f"llm_budget:{key}:{self.budget.day}",
                )
            )
        return True

    def budget_notice(self, state: SessionState) -> str | None:
        """What to tell the user about a spent budget: once a day per conversation."""
        if self.budget is None or state.llm_budget_notice_day == self.budget.day:
            return None
        state.llm_budget_notice_day = self.budget.day
        return BUDGET_NOTICE

    async def _circuit_opened(self, state: SessionState, t: TurnLog | None, e: ProviderError) -> None:
        b = self.breaker
        if t is not None:
            t.emit(
                "llm_circuit",
                {"provider": b.name, "state": "open", "error": e.kind, "cooldown": b.cooldown},
                level="error",
            )
        if self.alerts is not None:
            await self.alerts.notify(
                Alert(
                    kind=CoreAlert.PROVIDER_OUTAGE,
                    session_id=state.session_id,
                    summary=(
                        f"LLM provider {b.name} keeps failing ({e.kind}); understanding uses the embedded rules "
                        f"for the next {b.cooldown:.0f}s, then one call probes it."
                    ),
                    details={"provider": b.name, "error": e.kind, "state": "open", "opening": b.openings},
                    dedupe_key=f"llm_circuit_open:{b.name}:{b.openings}",
                )
            )

    async def _alert_outage(self, state: SessionState, purpose: str, e: ProviderError) -> None:
        if self.alerts is None:
            return
        await self.alerts.notify(
            Alert(
                kind=CoreAlert.PROVIDER_OUTAGE,
                session_id=state.session_id,
                summary=f"LLM provider failed ({e.kind}) after {e.attempts} attempt(s) during {purpose}.",
                details={"error": e.kind, "status": e.status, "attempts": e.attempts},
                dedupe_key=f"provider_outage:{e.kind}",
            )
        )


def parse_json_object(text: str | None) -> dict[str, Any] | None:
    """The JSON object in a model's answer (tolerating a ```json fence), or None."""
    if not text:
        return None
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    try:
        value = json.loads(body)
    except ValueError:
        start, end = body.find("{"), body.rfind("}")
        if start < 0 or end <= start:
            return None
        try:
            value = json.loads(body[start : end + 1])
        except ValueError:
            return None
    return value if isinstance(value, dict) else None
