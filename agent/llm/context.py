"""Fitting everything sent into the model's window: the system prompt, the tool schemas, the
history, the message and the tool results of this turn, with the answer reserve and a 10% margin
kept free.

Truncation (the default) keeps the newest messages that fit. Summarization condenses the
dropped ones with one extra LLM call and keeps the summary in the session's state. The window
then moves in steps: once summarized, the conversation keeps the summary and every message after
it until those no longer fit, and only then is a new summary made, leaving half the room free, so
a long conversation is summarized now and then rather than on every turn.
"""

from __future__ import annotations

import json
from typing import Any

from agent.context.log import TurnLog
from agent.conversation.session import HistorySummary, SessionState
from agent.domain.types import Message
from agent.errors import ProviderError
from agent.llm.calls import LLMCalls
from agent.llm.models import LLMRequest

MARGIN = 0.10


def as_chat(history: list[Message]) -> list[dict[str, Any]]:
    """Session messages as provider-neutral chat messages (pre-messages are noise to a model)."""
    out = []
    for m in history:
        if m.kind == "pre":
            continue
        out.append({"role": "user" if m.role == "user" else "assistant", "content": m.text})
    return out


def message_tokens(calls: LLMCalls, message: dict[str, Any]) -> int:
    """What one chat message costs, tool calls and tool results included."""
    p = calls.provider
    cost = p.estimate_tokens(str(message.get("content") or "")) + 4  # role and separators
    if message.get("tool_calls"):
        cost += p.estimate_tokens(json.dumps(message["tool_calls"], default=str))
    return cost


def room(calls: LLMCalls, tools: list[dict[str, Any]] | None = None) -> int:
    """Tokens left for messages once the margin, the answer reserve and the tool schemas are counted."""
    schemas = calls.provider.estimate_tokens(json.dumps(tools)) if tools else 0
    return int(calls.context_window * (1 - MARGIN)) - calls.settings.answer_reserve_tokens - schemas


def fit(
    calls: LLMCalls,
    system: str,
    history: list[Message],
    tail: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    after: str | None = None,
) -> tuple[list[dict[str, Any]], list[Message]]:
    """The newest history that fits next to `system`, `tools` and `tail`; also the messages left
    out. With `after` (a summary's boundary), everything after it is kept when it all fits."""
    p = calls.provider
    free = room(calls, tools) - p.estimate_tokens(system) - sum(message_tokens(calls, m) for m in tail)
    costs = [p.estimate_tokens(m.text) + 4 for m in history]
    if after is not None:
        start = next((i for i, m in enumerate(history) if m.timestamp.isoformat() > after), len(history))
        if start > 0 and sum(costs[start:]) <= free:
            return as_chat(history[start:]), history[:start]
        free //= 2  # a new summary: leave room for the conversation to go on before the next one
    kept = 0
    for cost in reversed(costs):
        if cost > free:
            break
        free -= cost
        kept += 1
    cut = len(history) - kept
    return as_chat(history[cut:]), history[:cut]


def trim(calls: LLMCalls, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
    """Drop the oldest history messages (never the system prompt, the user's message or this turn's
    tool exchange) until everything sent fits; returns how many were dropped."""
    free = room(calls, tools)
    head = sum(1 for m in messages if m["role"] == "system")
    last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=head)
    dropped = 0
    while sum(message_tokens(calls, m) for m in messages) > free and head < last_user - dropped:
        del messages[head]
        dropped += 1
    return dropped


async def history_messages(
    calls: LLMCalls,
    state: SessionState,
    t: TurnLog | None,
    system: str,
    history: list[Message],
    tail: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """`[system, (summary), fitted history..., tail...]` within the window."""
    summarize = calls.settings.history_strategy == "summarize"
    stored = state.history_summary if summarize else None
    chat, dropped = fit(calls, system, history, tail, tools, stored.through if stored else None)
    summary = stored.text if stored else ""
    if dropped and summarize:
        summary = await _summarize(calls, state, t, dropped, summary)
    if t is not None and dropped:
        t.emit("history_fitted", {"kept": len(chat), "dropped": len(dropped), "summary": bool(summary)})
    head = [{"role": "system", "content": system}]
    if summary:
        head.append({"role": "system", "content": f"Summary of the earlier conversation: {summary}"})
    return head + chat + tail


async def _summarize(
    calls: LLMCalls, state: SessionState, t: TurnLog | None, dropped: list[Message], previous: str
) -> str:
    through = dropped[-1].timestamp.isoformat()
    stored = state.history_summary
    if stored is not None and stored.through == through:
        return stored.text
    lines = "\n".join(f"{m.role}: {m.text}" for m in dropped)
    prompt = [
        {
            "role": "system",
            "content": "Summarize this support conversation in at most 5 short sentences. "
            "Keep order IDs, ticket IDs and what the customer still wants.",
        },
        {"role": "user", "content": (f"Earlier summary: {previous}\n\n" if previous else "") + lines},
    ]
    try:
        r = await calls.generate("summarize", state, LLMRequest(prompt, max_tokens=256), t)
    except ProviderError:
        return previous  # truncation is the fallback; the turn goes on
    text = (r.content or "").strip()
    if text:
        state.history_summary = HistorySummary(text=text, through=through)
    return text or previous
