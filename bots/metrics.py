"""Prometheus metrics for operators: `/metrics` on the serving port (`agentbot slack`) or a port of
its own (`agentbot discord`, `AGENTBOT_METRICS_PORT`).

The router reports each turn's end and each lost commit (`TurnMetrics`); what happened inside a
turn (intents, out of scope, confirmations, LLM usage) is read from its telemetry events as they
are emitted (`TelemetrySink`); what waits in the database (open handoffs, unsent answers, events
being retried) and the LLM circuit breaker's state are read when Prometheus scrapes. Label values
come from code and config (channel types, outcomes, intent ids, provider names), never from what
people wrote or from ids.
"""

from __future__ import annotations

import re
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Enum, Gauge, Histogram, generate_latest

from adapters.storage.backlog import WaitingEvents, read_backlog
from agent.domain.records import TelemetryEvent
from agent.llm.breaker import CircuitBreaker
from agent.storage import Database

# Seconds; turns run from a few milliseconds (rules) to tens of seconds (a slow LLM).
TURN_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
CONFIRMATIONS = {
    "confirmation_requested": "asked",
    "confirmation_accepted": "confirmed",
    "confirmation_refused": "refused",
    "confirmation_cancelled": "cancelled",
    "confirmation_expired": "expired",
}
# An intent id is a config name; anything else (or past this many distinct ones) is counted as "other".
_INTENT_ID = re.compile(r"[a-z0-9_]{1,64}")
MAX_INTENTS = 200
_WORKSPACE = re.compile(r"[A-Za-z0-9_-]{1,40}")
MAX_WORKSPACES = 50
_METHOD = re.compile(r"[A-Za-z0-9_.{}/ -]{1,80}")


class PrometheusMetrics:
    """The process's metrics on a registry of their own.

    Args:
        store: the database whose backlog is counted at each scrape (None: no backlog gauges).
    """

    def __init__(self, store: Database | None = None):
        self.store = store
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.turns = Counter("agentbot_turns", "Turns by channel and outcome", ["channel", "outcome"], registry=r)
        self.turn_seconds = Histogram(
            "agentbot_turn_duration_seconds", "Turn latency", ["channel"], buckets=TURN_BUCKETS, registry=r
        )
        self.intents = Counter("agentbot_intents", "Requests classified, by intent", ["intent"], registry=r)
        self.fallbacks = Counter(
            "agentbot_fallbacks",
            "Messages answered without a tool: out_of_scope or not_understood",
            ["reason"],
            registry=r,
        )
        self.confirmations = Counter(
            "agentbot_confirmations",
            "Confirmations asked, confirmed, refused, cancelled, expired",
            ["outcome"],
            registry=r,
        )
        self.llm_calls = Counter("agentbot_llm_calls", "LLM calls", registry=r)
        self.llm_errors = Counter("agentbot_llm_errors", "LLM calls that failed", registry=r)
        self.llm_tokens = Counter("agentbot_llm_tokens", "LLM tokens by direction", ["direction"], registry=r)
        self.llm_cost = Counter("agentbot_llm_cost_dollars", "Estimated LLM spend", registry=r)
        self.conflicts = Counter(
            "agentbot_db_commit_conflicts", "Turns that lost the session's optimistic lock", registry=r
        )
        self.breaker = Enum(
            "agentbot_llm_breaker_state",
            "LLM circuit breaker",
            ["provider"],
            states=["closed", "open", "half_open"],
            registry=r,
        )
        self.handoffs_open = Gauge("agentbot_handoffs_open", "Handoffs requested or claimed", registry=r)
        self.outbox_unsent = Gauge("agentbot_outbox_unsent_messages", "Answers stored but not yet sent", registry=r)
        self.outbox_age = Gauge(
            "agentbot_outbox_oldest_unsent_age_seconds", "Age of the oldest unsent answer (0: none)", registry=r
        )
        self.inbox_unfinished = Gauge("agentbot_inbox_unfinished_events", "Channel events not yet done", registry=r)
        self.inbox_retrying = Gauge(
            "agentbot_inbox_retrying_events", "Unfinished events whose delivery failed at least once", registry=r
        )
        self.waiting = Gauge(
            "agentbot_inbox_waiting_events",
            "Channel events not yet answered, per workspace (the busiest ones; the rest as other)",
            ["workspace"],
            registry=r,
        )
        self.waiting_age = Gauge(
            "agentbot_inbox_oldest_waiting_age_seconds",
            "How long the workspace's oldest unanswered event has waited",
            ["workspace"],
            registry=r,
        )
        self.gateway_skipped = Counter(
            "agentbot_gateway_events_skipped",
            "Platform events the client library could not read, skipped (the process goes on)",
            ["channel", "event"],
            registry=r,
        )
        self.rate_limited_calls = Counter(
            "agentbot_platform_rate_limited_calls",
            "Platform calls refused with 429; every sender to the method waits out the pause",
            ["channel", "method"],
            registry=r,
        )
        self.pre_messages_skipped = Counter(
            "agentbot_pre_messages_skipped",
            "Pre-messages not shown because their answer had already gone out",
            ["channel"],
            registry=r,
        )
        self._breakers: list[CircuitBreaker] = []
        self._intents: set[str] = set()

    # TurnMetrics (the router)
    def turn_ended(self, channel: str, outcome: str, seconds: float) -> None:
        self.turns.labels(channel, outcome).inc()
        self.turn_seconds.labels(channel).observe(seconds)

    def commit_conflict(self) -> None:
        self.conflicts.inc()

    # A channel's gateway: an event its library could not parse (the event type is the platform's name)
    def gateway_event_skipped(self, channel: str, event: str) -> None:
        self.gateway_skipped.labels(channel, event).inc()

    # A channel's platform calls: a 429 (the method is a platform API name or route from code)
    def rate_limited(self, platform: str, method: str) -> None:
        self.rate_limited_calls.labels(platform, method if _METHOD.fullmatch(method) else "other").inc()

    # A channel's delivery: a pre-message left out on purpose, its answer already shown
    def pre_message_skipped(self, channel: str) -> None:
        self.pre_messages_skipped.labels(channel).inc()

    # TelemetrySink (every stage of every turn)
    def record(self, event: TelemetryEvent) -> None:
        payload = event.payload
        stage = event.stage
        if stage == "intent_classified":
            self.intents.labels(self._intent(payload.get("intent_id"))).inc()
        elif stage == "response_generated" and "out_of_scope" in payload:
            self.fallbacks.labels("out_of_scope" if payload["out_of_scope"] else "not_understood").inc()
        elif stage in CONFIRMATIONS:
            self.confirmations.labels(CONFIRMATIONS[stage]).inc()
        llm = payload.get("llm")
        if isinstance(llm, dict):
            self._llm(llm)

    def _intent(self, intent_id: Any) -> str:
        if intent_id is None:
            return "none"  # a control word (cancel, thanks) or nothing understood
        name = str(intent_id)
        if name in self._intents:
            return name
        if _INTENT_ID.fullmatch(name) and len(self._intents) < MAX_INTENTS:
            self._intents.add(name)
            return name
        return "other"

    def _llm(self, usage: dict[str, Any]) -> None:
        self.llm_calls.inc(usage.get("calls", 0))
        self.llm_errors.inc(usage.get("errors", 0))
        self.llm_tokens.labels("input").inc(usage.get("tokens_in", 0))
        self.llm_tokens.labels("output").inc(usage.get("tokens_out", 0))
        self.llm_cost.inc(max(0.0, usage.get("cost", 0.0)))

    def _waiting(self, waiting: list[WaitingEvents]) -> None:
        # A workspace id is the platform's team or guild id, not personal; the busiest ones are
        # labelled and the rest summed as "other", so a bot in many workspaces keeps few series.
        events: dict[str, int] = {}
        oldest: dict[str, float] = {}
        for n, w in enumerate(waiting):
            label = w.workspace if n < MAX_WORKSPACES and _WORKSPACE.fullmatch(w.workspace) else "other"
            events[label] = events.get(label, 0) + w.events
            oldest[label] = max(oldest.get(label, 0.0), w.oldest_seconds)
        self.waiting.clear()
        self.waiting_age.clear()
        for label, count in events.items():
            self.waiting.labels(label).set(count)
            self.waiting_age.labels(label).set(oldest[label])

    def watch(self, breaker: CircuitBreaker) -> None:
        """Report this breaker's state at every scrape."""
        self._breakers.append(breaker)
        self.breaker.labels(breaker.name).state(breaker.state)

    async def exposition(self) -> tuple[bytes, str]:
        """The metrics in Prometheus' text format, and its content type; the gauges read now."""
        for breaker in self._breakers:
            self.breaker.labels(breaker.name).state(breaker.state)
        if self.store is not None:
            backlog = await read_backlog(self.store)
            self.handoffs_open.set(backlog.handoffs_open)
            self.outbox_unsent.set(backlog.outbox_unsent)
            self.outbox_age.set(backlog.outbox_oldest_unsent_seconds)
            self.inbox_unfinished.set(backlog.inbox_unfinished)
            self.inbox_retrying.set(backlog.inbox_retrying)
            self._waiting(backlog.waiting)
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
