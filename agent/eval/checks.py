"""Whether a turn did what its suite expected: tools, goals and stages exactly, replies by meaning."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from agent.domain.types import AgentResponse
from agent.eval.suite import Expect


class Failure(BaseModel):
    turn: int
    key: str
    expected: Any
    got: Any


def meaning(text: str) -> str:
    """Text reduced to what it states, so a check holds however it is worded or formatted (templates,
    a model, Slack markdown): lowercase, no currency signs, thousands separators, trailing decimal
    zeros, markdown or punctuation; "฿1,490.00" and "1490" read the same."""
    t = text.lower()
    t = re.sub(r"[$฿€£*_`]", "", t)
    t = re.sub(r"(?<=\d),(?=\d{3})", "", t)
    t = re.sub(r"(?<![\d.])(\d+\.\d*?)0+(?![\d.]*\d)", r"\1", t)
    t = re.sub(r"(?<=\d)\.(?!\d)", "", t)
    t = re.sub(r"[.,:;!?()\[\]\"']+(?!\d)|(?<!\d)[.,:;!?()]+", " ", t)
    return " ".join(t.split())


def states(text: str, fact: str) -> bool:
    """Whether `text` states `fact` (a sign alone, like "฿", is matched as written)."""
    wanted = meaning(fact)
    if not wanted:
        return fact.lower() in text.lower()
    # A figure is a whole figure: "฿20" is not stated by "฿420".
    before = r"(?<!\d)" if wanted[0].isdigit() else ""
    after = r"(?!\d)" if wanted[-1].isdigit() else ""
    return re.search(before + re.escape(wanted) + after, meaning(text)) is not None


_PUNCTUATION = re.compile(r"[^\w\s$฿€£]|(?<!\d)[.,]|[.,](?!\d)")


def mentions(text: str, fact: str) -> bool:
    """Whether `text` says what a `reply_not_contains` forbids. A fact written with punctuation
    forbids that form of writing (".md", "plants?", "refunded: ฿420"), so it is matched as written;
    words and figures are matched by meaning, as whole words ("md" is not in "AMD")."""
    if _PUNCTUATION.search(fact):
        return fact.lower() in text.lower()
    wanted = meaning(fact)
    return bool(wanted) and re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", meaning(text)) is not None


def check(expect: Expect, response: AgentResponse, stages: list[str], turn: int) -> list[Failure]:
    """Compare one turn's outcome with what the suite expected; return the mismatches."""
    executed = [r.tool for r in response.tool_results if r.error_code not in ("policy_denied", "policy_escalated")]
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
        "confirmation": response.confirmation,
        "alerts": response.alerts,
        "choices": [o.label for m in response.messages for o in m.choices],
    }
    wanted = expect.model_dump(include=expect.given())
    failures = [
        Failure(turn=turn, key=key, expected=wanted[key], got=got[key])
        for key in sorted(wanted.keys() & got.keys())
        if wanted[key] != got[key]
    ]
    failures += [
        Failure(turn=turn, key="reply_contains", expected=s, got=response.text)
        for s in expect.reply_contains
        if not states(response.text, s)
    ]
    failures += [
        Failure(turn=turn, key="reply_not_contains", expected=s, got=response.text)
        for s in expect.reply_not_contains
        if mentions(response.text, s)
    ]
    return failures
