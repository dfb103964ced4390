"""Whether a turn did what its suite expected: tools, goals and stages exactly, replies by meaning."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from agent.eval.suite import Expect
from agent.types import AgentResponse


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
    return wanted in meaning(text) if wanted else fact.lower() in text.lower()


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
    }
    failures = [
        Failure(turn=turn, key=key, expected=getattr(expect, key), got=got[key])
        for key in sorted(expect.given() & got.keys())
        if getattr(expect, key) != got[key]
    ]
    failures += [
        Failure(turn=turn, key="reply_contains", expected=s, got=response.text)
        for s in expect.reply_contains
        if not states(response.text, s)
    ]
    failures += [
        Failure(turn=turn, key="reply_not_contains", expected=s, got=response.text)
        for s in expect.reply_not_contains
        if states(response.text, s)
    ]
    return failures
