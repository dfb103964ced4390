"""Fitting history into the model's window: system prompt + answer reserve + a 10% margin stay free.

Truncation (the default) keeps the newest messages that fit. Summarization condenses the
dropped ones with one extra LLM call and keeps the summary in the session's state, so the next
turn starts from it instead of re-summarizing.
"""

from __future__ import annotations

from typing import Any

from agent.errors import ProviderError
from agent.interfaces import TurnLog
from agent.llm.calls import LLMCalls
from agent.session import HistorySummary, SessionState
from agent.types import Message

MARGIN = 0.10


def as_chat(history: list[Message]) -> list[dict[str, Any]]:
    """Session messages as provider-neutral chat messages (pre-messages are noise to a model)."""
    out = []
    for m in history:
        if m.kind == "pre":
            continue
        out.append({"role": "user" if m.role == "user" else "assistant", "content": m.text})
    return out


def fit(
    calls: LLMCalls, system: str, history: list[Message], tail: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[Message]]:
    """The newest history that fits next to `system` and `tail`; also the messages left out."""
    p = calls.provider
    window = calls.context_window
    used = p.estimate_tokens(system) + sum(p.estimate_tokens(str(m.get("content") or "")) for m in tail)
    room = int(window * (1 - MARGIN)) - calls.settings.answer_reserve_tokens - used
    kept: list[Message] = []
    for m in reversed(history):
        cost = p.estimate_tokens(m.text) + 4  # role and separators
        if cost > room:
            break
        room -= cost
        kept.append(m)
    kept.reverse()
    return as_chat(kept), history[: len(history) - len(kept)]


async def history_messages(
    calls: LLMCalls,
    state: SessionState,
    t: TurnLog | None,
    system: str,
    history: list[Message],
    tail: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """`[system, (summary), fitted history..., tail...]` within the window."""
    chat, dropped = fit(calls, system, history, tail)
    summary = state.history_summary.text if state.history_summary else ""
    if dropped and calls.settings.history_strategy == "summarize":
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
        r = await calls.generate("summarize", state, prompt, t, max_tokens=256)
    except ProviderError:
        return previous  # truncation is the fallback; the turn goes on
    text = (r.content or "").strip()
    if text:
        state.history_summary = HistorySummary(text=text, through=through)
    return text or previous
