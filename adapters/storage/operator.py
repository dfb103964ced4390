"""What the operator page reads: conversations, their turns, the handoff queue and the day's figures.

Read-only, over the tables the turns write. A conversation's workspace is the one its state names,
so every list here is filtered by workspace before anything is shown.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import Connection, select

from adapters.storage.base import OnDatabase
from adapters.storage.schema import messages, sessions, telemetry
from adapters.storage.telemetry import events_of
from agent.domain.records import TelemetryEvent


class Conversation(BaseModel):
    session_id: str
    workspace: str
    channel: str
    customer: str | None
    turns: int
    updated_at: datetime
    handoff: str | None = None  # requested | claimed | released
    handoff_by: str = ""
    handoff_reason: str = ""
    # The action an escalation holds for a person (agent/turn/desk.py), and the decision on it.
    held_id: str = ""
    held_action: str = ""  # the tool and its exact parameters
    decision: str = ""  # approved | denied, once decided
    decided_by: str = ""


class Line(BaseModel):
    role: str
    kind: str
    text: str
    at: datetime


class TurnView(BaseModel):
    """One turn of a transcript: the customer's message, the bot's messages, and what it read and did."""

    interaction_id: str
    lines: list[Line] = Field(default_factory=list)
    intent: str | None = None
    confidence: float | None = None
    candidates: list[Any] = Field(default_factory=list)
    move: str | None = None
    values: dict[str, Any] = Field(default_factory=dict)
    tools: list[dict[str, Any]] = Field(default_factory=list)
    policy: list[dict[str, Any]] = Field(default_factory=list)
    outcome: dict[str, Any] = Field(default_factory=dict)


class DayFigures(BaseModel):
    day: date
    turns: int = 0
    understood: int = 0
    classified: int = 0  # turns that were read for an intent at all
    clarifications: int = 0
    fallbacks: int = 0

    @property
    def understood_share(self) -> float | None:
        return self.understood / self.classified if self.classified else None


def _conversation(row: Any) -> Conversation:
    state = json.loads(row.state)
    handoff = state.get("handoff") or {}
    return Conversation(
        session_id=row.id,
        workspace=state.get("workspace_id") or "",
        channel=row.channel_type or state.get("channel_type") or "",
        customer=row.customer_id,
        turns=int(state.get("turns") or 0),
        updated_at=row.updated_at,
        handoff=handoff.get("status"),
        handoff_by=handoff.get("by") or "",
        handoff_reason=handoff.get("reason") or "",
        **_held(handoff.get("escalation") or {}),
    )


def _held(escalation: dict[str, Any]) -> dict[str, str]:
    if not escalation:
        return {}
    params = ", ".join(f"{k}={v}" for k, v in sorted((escalation.get("params") or {}).items()))
    return {
        "held_id": escalation.get("id") or "",
        "held_action": f"{escalation.get('tool')}({params})",
        "decision": escalation.get("decision") or "",
        "decided_by": escalation.get("by") or "",
    }


def figures_of(events: Sequence[TelemetryEvent]) -> tuple[bool, bool, bool, bool]:
    """(read for an intent, understood, a clarification asked, a fallback) of one turn's events."""
    classified = [e.payload for e in events if e.stage == "intent_classified"]
    understood = any(p.get("intent_id") for p in classified)
    clarified = any(e.payload.get("clarify") for e in events)
    fell_back = any(e.payload.get("fallback") for e in events if e.stage == "response_generated")
    return bool(classified), understood, clarified, fell_back


class OperatorViews(OnDatabase):
    """The operator page's reads over the database the turns commit to (`app.storage.database`)."""

    async def conversations(self, workspace: str | None, text: str = "", limit: int = 200) -> list[Conversation]:
        """Newest first; `text` matches the customer, the channel, the conversation's id or its messages."""
        needle = text.strip().lower()

        def unit(conn: Connection) -> list[Conversation]:
            rows = conn.execute(select(sessions).order_by(sessions.c.updated_at.desc())).all()
            found = [c for c in map(_conversation, rows) if workspace is None or c.workspace == workspace]
            if needle:
                said = {
                    r.session_id
                    for r in conn.execute(
                        select(messages.c.session_id).where(messages.c.text.ilike(f"%{needle}%")).distinct()
                    ).all()
                }
                found = [
                    c
                    for c in found
                    if c.session_id in said
                    or needle in (c.customer or "").lower()
                    or needle in c.channel.lower()
                    or needle in c.session_id.lower()
                ]
            return found[:limit]

        return await self._run(unit, what="read conversations")

    async def workspaces(self) -> list[str]:
        def unit(conn: Connection) -> list[str]:
            rows = conn.execute(select(sessions)).all()
            return sorted({_conversation(r).workspace for r in rows})

        return await self._run(unit, what="read workspaces")

    async def conversation(self, session_id: str) -> tuple[Conversation | None, list[TurnView]]:
        def unit(conn: Connection) -> tuple[Conversation | None, list[TurnView]]:
            row = conn.execute(select(sessions).where(sessions.c.id == session_id)).first()
            if row is None:
                return None, []
            said = conn.execute(
                select(messages).where(messages.c.session_id == session_id).order_by(messages.c.id)
            ).all()
            stored = conn.execute(
                select(telemetry).where(telemetry.c.session_id == session_id).order_by(telemetry.c.id)
            ).all()
            turns: dict[str, TurnView] = {}
            for m in said:
                key = m.interaction_id or f"m{m.id}"
                turns.setdefault(key, TurnView(interaction_id=key)).lines.append(
                    Line(role=m.role, kind=m.kind, text=m.text, at=m.created_at)
                )
            for r in stored:
                turn = turns.setdefault(r.interaction_id, TurnView(interaction_id=r.interaction_id))
                _read_into(turn, events_of(r))
            return _conversation(row), list(turns.values())

        return await self._run(unit, what="read a conversation")

    async def days(self, workspace: str | None, today: date, count: int = 14) -> list[DayFigures]:
        """Turns, understood share, clarifications and fallbacks per UTC day, oldest first."""
        first = today - timedelta(days=count - 1)

        def unit(conn: Connection) -> list[DayFigures]:
            allowed: set[str] | None = None
            if workspace is not None:
                rows = conn.execute(select(sessions)).all()
                allowed = {r.id for r in rows if _conversation(r).workspace == workspace}
            by_day = {first + timedelta(days=n): DayFigures(day=first + timedelta(days=n)) for n in range(count)}
            q = select(telemetry).where(telemetry.c.created_at >= _utc(first))
            for r in conn.execute(q).all():
                if allowed is not None and r.session_id not in allowed:
                    continue
                day = by_day.get(r.created_at.date())
                if day is None:
                    continue
                classified, understood, clarified, fell_back = figures_of(events_of(r))
                day.turns += 1
                day.classified += classified
                day.understood += understood
                day.clarifications += clarified
                day.fallbacks += fell_back
            return list(by_day.values())

        return await self._run(unit, what="read the day's figures")


def _utc(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _read_into(turn: TurnView, events: list[TelemetryEvent]) -> None:
    for e in events:
        p = e.payload
        if e.stage == "intent_classified" and turn.intent is None:
            turn.intent = p.get("intent_id")
            turn.confidence = p.get("confidence")
            turn.candidates = list(p.get("candidates") or [])
            turn.move = p.get("reply")
            turn.values = dict(p.get("params") or {})
        elif e.stage == "policy_check":
            turn.policy.append(p)
        elif e.stage == "tool_execute":
            turn.tools.append(p)
        elif e.stage == "response_generated":
            turn.outcome = {k: v for k, v in p.items() if k != "message"}
