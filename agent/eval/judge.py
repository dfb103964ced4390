"""LLM-as-judge: a separate model scores a finished conversation against a rubric.

Used for what ground-truth checks cannot see (is the reasoning sound, is anything invented). The
judge answers JSON `{"score": 1-5, "reasons": "..."}`; the score is normalized to 0..1. A judge
that fails or answers nonsense gives no score (None), never a made-up one.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from agent.errors import AgentbotError
from agent.llm.models import LLMRequest
from agent.llm.provider import LLMProvider

DEFAULT_RUBRIC = (
    "The assistant understood each request, used tool results rather than guessing, asked only for "
    "what it needed, stayed grounded in the data (no invented facts) and answered clearly."
)

SYSTEM = (
    "You grade a chat assistant's conversation against a rubric. Reply with JSON only: "
    '{"score": <integer 1-5>, "reasons": "<one or two sentences>"}. 5 = fully meets the rubric, '
    "1 = fails it."
)

SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "judgement",
        "schema": {
            "type": "object",
            "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 5}, "reasons": {"type": "string"}},
            "required": ["score", "reasons"],
            "additionalProperties": False,
        },
    },
}


class _Verdict(BaseModel):
    score: int = Field(ge=1, le=5)
    reasons: str = ""


class Judgement(BaseModel):
    score: float | None  # 0..1, None when the judge gave no usable answer
    reasons: str = ""
    cost: float = 0.0


def transcript_text(transcript: list[tuple[str, str]]) -> str:
    return "\n".join(f"{who}: {text}" for who, text in transcript)


async def judge(provider: LLMProvider, transcript: list[tuple[str, str]], rubric: str | None = None) -> Judgement:
    """Score one conversation (`[(speaker, text), ...]`) against `rubric` with `provider`."""
    messages = [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"Rubric:\n{rubric or DEFAULT_RUBRIC}\n\nConversation:\n{transcript_text(transcript)}",
        },
    ]
    try:
        response = await provider.generate(LLMRequest(messages, response_format=SCHEMA))
    except AgentbotError as e:
        return Judgement(score=None, reasons=f"judge unavailable: {e}")
    try:
        verdict = _Verdict.model_validate(json.loads(response.content or ""))
    except (ValueError, ValidationError):
        return Judgement(score=None, reasons=f"judge answered something other than a verdict: {response.content!r}")
    return Judgement(score=round((verdict.score - 1) / 4, 4), reasons=verdict.reasons, cost=response.cost)
