"""One turn's bookkeeping: its telemetry events (redacted, timed) and the messages it delivers."""

from __future__ import annotations

import time
from typing import Any

from agent.interfaces import Reply, TelemetrySink, TurnTrace
from agent.llm.models import Usage
from agent.records import TelemetryEvent
from agent.tracing import NullTrace
from agent.types import Alert, Interaction, Message, OutboundMessage, SideEffect, utcnow

LEVELS = ("info", "warn", "error")


class Turn:
    """
    Args:
        interaction: the message being handled.
        sink: receives every event as it is emitted (they are also committed with the turn).
        redacted: parameter names whose values never reach telemetry.
        reply: the channel's delivery callable, or None to collect only.
        delivered: messages already delivered by an earlier attempt of this same turn; a retry
            after a version conflict does not send them twice.
        trace: the turn's trace; each emitted stage becomes a span in it.
    """

    def __init__(
        self,
        interaction: Interaction,
        session_id: str,
        sink: TelemetrySink | None,
        redacted: frozenset[str],
        reply: Reply | None,
        delivered: list[OutboundMessage],
        trace: TurnTrace | None = None,
    ):
        self.interaction = interaction
        self.session_id = session_id
        self.sink = sink
        self.redacted = redacted
        self.reply = reply
        self.delivered = delivered
        self._skip = list(delivered)
        self.events: list[TelemetryEvent] = []
        self.outbound: list[OutboundMessage] = []
        self.alerts: list[Alert] = []  # sent to admins after the turn commits
        self.effects: list[SideEffect] = []  # rows the turn writes besides its tools' (handoff state)
        self._last = time.perf_counter()
        self.trace: TurnTrace = trace or NullTrace()
        self.usage = Usage()  # LLM calls of this turn (agent/llm/calls.py counts them here)
        self._usage_seen = Usage()
        self.scratch: dict[str, Any] = {}  # per-turn working state of lower layers, never persisted
        self.approved: str | None = None  # the action hash the user confirmed in this turn

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

    def emit(self, stage: str, payload: dict[str, Any] | None = None, level: str = "info") -> TelemetryEvent:
        now = time.perf_counter()
        payload = self.redact(payload or {})
        if (llm := self._llm_since_last_stage()) is not None:
            payload["llm"] = llm
        if level not in LEVELS:
            raise ValueError(f"unknown telemetry level {level!r}")
        # Every field is built right here, so validating them again is skipped (a turn emits ~8).
        event = TelemetryEvent.model_construct(
            timestamp=utcnow(),
            session_id=self.session_id,
            interaction_id=self.interaction.id,
            stage=stage,
            level=level,  # type: ignore[arg-type]  # checked against LEVELS above
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
        out: dict[str, Any] = {}
        for k, v in payload.items():
            if k in self.redacted:
                out[k] = "***"
            elif isinstance(v, dict):
                out[k] = self.redact(v)
            else:
                out[k] = v
        return out

    async def send(self, message: OutboundMessage) -> None:
        self.outbound.append(message)
        if message in self._skip:
            self._skip.remove(message)
            return
        self.delivered.append(message)
        if self.reply is not None:
            await self.reply(message)

    def agent_messages(self) -> list[Message]:
        meta = {"interaction_id": self.interaction.id}
        return [Message(role="agent", text=m.text, kind=m.kind, metadata=meta) for m in self.outbound]

    @property
    def final_text(self) -> str:
        return "\n\n".join(m.text for m in self.outbound if m.kind != "pre")
