"""One turn's log (its telemetry events, redacted, timed and traced, and its LLM usage) and the
typed record of what its steps decided on the way."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent.context.outcome import Chosen, Classified, TurnOutcome
from agent.context.telemetry import TelemetrySink
from agent.context.tracing import NullTrace, TurnTrace
from agent.domain.records import Level, TelemetryEvent
from agent.domain.types import Interaction, utcnow
from agent.llm.models import AgentLoop, Usage
from agent.redaction import Redactor


@dataclass
class TurnDecisions:
    """What a turn's steps decided on the way, for the steps after them; it ends with the turn."""

    approved: str | None = None  # the action hash the user confirmed in this turn
    intent: str | None = None  # the turn's intent, when a follow-up changed what was read
    offered_human: bool = False  # a person was offered once this turn; never twice
    # What the customer picked from a question with choices this turn, recorded with the request's reading.
    chosen: Chosen | None = None
    llm_deadline: float | None = None  # monotonic time all LLM work of the turn must end by
    llm_down: str | None = None  # the outage that failed an LLM call this turn: no more calls
    agent_loops: dict[str, dict[str, AgentLoop]] = field(default_factory=dict)  # LLM agents' conversations by goal


class Turn:
    """The log of one turn: its telemetry events (redacted, timed, traced), its LLM usage, and what
    its steps decided on the way (`decided`). What it shows and leaves behind is its `TurnOutput`.

    Args:
        interaction: the message being handled.
        sink: receives every event as it is emitted (they are also committed with the turn).
        redactor: masks telemetry payloads (named parameters whole; every other string scanned for
            personal data and secrets, `agent.redaction`).
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
        self.decided = TurnDecisions()
        self.outcome = TurnOutcome()  # what the turn made of its message; its review is derived from it

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

    def classified(self, reading: Classified) -> TelemetryEvent:
        """Record a reading the turn acts on, and emit it as `intent_classified`. The outcome keeps
        it redacted as the event is, so a review item holds no more than telemetry does."""
        event = self.emit("intent_classified", reading.payload())
        if reading.params is not None:
            reading = reading.model_copy(update={"params": self.redact(reading.params)})
        self.outcome.classified.append(reading)
        return event

    def redact(self, payload: dict[str, Any]) -> dict[str, Any]:
        return self.redactor.value(payload)  # type: ignore[no-any-return]


class TurnLog(Protocol):
    """What classifiers and planners may use of the running turn (agent/context/log.py): its message,
    telemetry that commits with it, and its LLM usage, deadline, outage and agent conversations."""

    interaction: Interaction
    usage: Usage
    decided: TurnDecisions  # the LLM deadline, an outage this turn, the agents' model conversations
    outcome: TurnOutcome

    def emit(self, stage: str, payload: dict[str, Any] | None = None, level: Level = "info") -> TelemetryEvent: ...
