"""The grounding guard: an LLM answer may only state facts that this turn's data contains.

Prices, stock counts, amounts and dates are checked as numbers; order states as words. A claim
is grounded when the same number or state appears in the tool results, the session's facts or
the goal's slots. The check is deliberately literal: a false alarm costs a template answer,
a missed one costs a customer a wrong delivery date.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Order and ticket states a model might invent ("delivered" when it is in transit).
STATES = (
    "shipped",
    "in transit",
    "delivered",
    "delayed",
    "refunded",
    "processing",
    "cancelled",
    "canceled",
    "returned",
    "out for delivery",
    "on hold",
    "lost",
)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_MONTHS = re.compile(
    r"\b((?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*)\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b", re.I
)
_MONTH_NO = {
    m: i
    for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)
}


def _numbers(text: str) -> set[str]:
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text)  # 1,299.00 -> 1299.00
    out = set()
    for n in _NUMBER.findall(text):
        value = float(n)
        out.add(f"{value:g}" if value < 1e15 else n)
    return out


def _corpus(sources: list[Any]) -> tuple[str, set[str]]:
    text = " ".join(json.dumps(s, default=str) if not isinstance(s, str) else s for s in sources)
    text = text.lower().replace("_", " ")
    numbers = _numbers(text)
    # An ISO date grounds its month written as a name too ("Oct 20" for 2025-10-20).
    for y, m, d in re.findall(r"(\d{4})-(\d{2})-(\d{2})", text):
        numbers.update({str(int(y)), str(int(m)), str(int(d))})
    return text, numbers


def ungrounded(answer: str, sources: list[Any]) -> list[str]:
    """The claims in `answer` that none of `sources` supports (empty when the answer is grounded)."""
    text, numbers = _corpus(sources)
    lowered = answer.lower()
    claims: list[str] = []
    for month, day in _MONTHS.findall(lowered):
        month_no = str(_MONTH_NO.get(month[:3], 0))
        if month_no not in numbers or str(int(day)) not in numbers:
            claims.append(f"{month} {day}")
    for n in sorted(_numbers(lowered) - numbers):
        claims.append(n)
    for state in STATES:
        if re.search(rf"\b{state}\b", lowered) and not re.search(rf"\b{state}\b", text):
            claims.append(state)
    return claims
