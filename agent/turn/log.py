"""One turn's log: its telemetry events (redacted, timed, traced), its LLM usage, the facts it decides."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from agent.domain.records import Level, TelemetryEvent
from agent.domain.types import (
    Interaction,
    utcnow,
)
from agent.errors import StorageError, TurnDeadline
from agent.interfaces import TelemetrySink, TurnTrace
from agent.llm.models import AgentLoop, Usage
from agent.turn.redaction import Redactor
from agent.turn.tracing import NullTrace


@asynccontextmanager
async def deadline(seconds: float) -> AsyncIterator[None]:
    """Bound a turn's work, so a hung provider cannot hold its session (and its lease) for long."""
    try:
        async with asyncio.timeout(seconds):
            yield
    except TimeoutError as e:
        raise TurnDeadline(f"the turn took longer than {seconds:g} s") from e


async def settle_conflict(attempt: int, retries: int, from_inbox: bool) -> None:
    """After a lost optimistic lock (or a task number another turn took): nothing but pre-messages
    was shown, so the next attempt runs on fresh state, a random moment later so that contenders
    spread out. A stored channel event that keeps losing is left in its inbox for a later retry
    rather than refused."""
    if attempt + 1 < retries:
        await asyncio.sleep(random.uniform(0, 0.05 * (attempt + 1)))
    elif from_inbox:
        raise StorageError(f"still conflicting after {retries} attempts")


class Turn:
    """The log of one turn: its telemetry events (redacted, timed, traced), its LLM usage, and the
    facts its steps decide on the way. What it shows and leaves behind is its `Outbox`.

    Args:
        interaction: the message being handled.
        sink: receives every event as it is emitted (they are also committed with the turn).
        redactor: masks telemetry payloads (named parameters whole; every other string scanned for
            personal data and secrets, `agent.turn.redaction`).
        trace: the turn's trace; each emitted stage becomes a span in it.
    """

    def __init__(
        self,
        interaction: Interaction,
        session_id: str,
        sink: TelemetrySink | None,
        redactor: Redactor,
        trace: TurnTrace | None = None,
    ):
        self.interaction = interaction
        self.session_id = session_id
        self.sink = sink
        self.redactor = redactor
        self.events: list[TelemetryEvent] = []
        self._last = time.perf_counter()
        self.trace: TurnTrace = trace or NullTrace()
        self.usage = Usage()  # LLM calls of this turn (agent/llm/calls.py counts them here)
        self._usage_seen = Usage()
        self.approved: str | None = None  # the action hash the user confirmed in this turn
        self.intent: str | None = None  # the turn's intent, when a follow-up changed what was read
        self.offered_human = False  # a person was offered once this turn; never twice
        self.llm_deadline: float | None = None  # monotonic time all LLM work of the turn must end by
        self.llm_down: str | None = None  # the outage that failed an LLM call this turn: no more calls
        self.agent_loops: dict[str, dict[str, AgentLoop]] = {}  # LLM agents' model conversations by goal

    @property
    def trace_id(self) -> str | None:
        return self.trace.trace_id

    def _llm_since_last_stage(self) -> dict[str, Any] | None:
        usage = self.usage
        # Every call, failed or not, bumps `calls`: no new call since the last stage, nothing to add.
        if usage.calls == self._usage_seen.calls:
            return None
        delta = usage.minus(self._usage_seen)
        self._usage_seen = usage.model_copy()
        return None if delta.empty else delta.model_dump()

    def emit(self, stage: str, payload: dict[str, Any] | None = None, level: Level = "info") -> TelemetryEvent:
        now = time.perf_counter()
        payload = self.redact(payload or {})
        if (llm := self._llm_since_last_stage()) is not None:
            payload["llm"] = llm
        event = TelemetryEvent(
            timestamp=utcnow(),
            session_id=self.session_id,
            interaction_id=self.interaction.id,
            stage=stage,
            level=level,
            payload=payload,
            duration_ms=round((now - self._last) * 1000, 3),
            trace_id=self.trace.trace_id,
            span_id=None,
        )
        # The span exists before sinks and the database see the event, so both carry its id.
        event.span_id = self.trace.stage(event)
        self._last = now
        self.events.append(event)
        if self.sink is not None:
            self.sink.record(event)
        return event

    def redact(self, payload: dict[str, Any]) -> dict[str, Any]:
        return self.redactor.value(payload)  # type: ignore[no-any-return]
