"""The grounding guard: an LLM answer may only state facts that this turn's data contains.

Prices, stock counts and amounts are checked as numbers; dates as dates (an ISO date or a month
and day must be a day the data names, not just numbers that occur somewhere in it); order and task states as words;
ids (O-12345, MS-102, R-1A2B) as ids. A claim is grounded when the same number, state or id
appears in the tool results, the session's facts or the goal's slots; how many things a result
lists counts as grounded too ("3 options"). Enumeration and formatting are not claims: "1." of a
numbered list, markdown, thousands separators and currency signs are ignored. The check is
deliberately literal: a false alarm costs a rules answer, a missed one costs a customer a wrong
delivery date.
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
_ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_ID = re.compile(r"\b[a-z]{1,4}-[a-z0-9]*\d[a-z0-9]*\b", re.I)
# "1. Save your work", "2) Update", "- step 3:", "Step 4 -": list markers, not facts.
_ENUMERATION = re.compile(r"(?m)^\s*(?:[-*]\s*)?(?:step\s+)?\d{1,2}[.):]\s+|\bstep\s+\d{1,2}\b", re.I)
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


def _lengths(value: Any, out: set[str]) -> None:
    if isinstance(value, list):
        out.add(str(len(value)))
        for v in value:
            _lengths(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _lengths(v, out)


def _days(text: str) -> set[tuple[int, int, int]]:
    return {(int(y), int(m), int(d)) for y, m, d in _ISO_DATE.findall(text)}


def _corpus(sources: list[Any]) -> tuple[str, set[str]]:
    text = " ".join(json.dumps(s, default=str) if not isinstance(s, str) else s for s in sources)
    text = text.lower().replace("_", " ")
    numbers = _numbers(text)
    for s in sources:
        _lengths(s, numbers)
    # An ISO date grounds its month written as a name too ("Oct 20" for 2025-10-20).
    for y, m, d in re.findall(r"(\d{4})-(\d{2})-(\d{2})", text):
        numbers.update({str(int(y)), str(int(m)), str(int(d))})
    return text, numbers


def ungrounded(answer: str, sources: list[Any]) -> list[str]:
    """The claims in `answer` that none of `sources` supports (empty when the answer is grounded)."""
    text, numbers = _corpus(sources)
    lowered = _ENUMERATION.sub(" ", answer.lower())
    days = _days(text)
    claims = [f"{y}-{m:02d}-{d:02d}" for y, m, d in sorted(_days(lowered) - days)]
    lowered = _ISO_DATE.sub(" ", lowered)
    squeezed = text.replace(" ", "")
    for found in _ID.findall(lowered):
        if found not in text and found.replace("-", "") not in squeezed:
            claims.append(found)
        lowered = lowered.replace(found, " ")
    for month, day in _MONTHS.findall(lowered):
        month_no = _MONTH_NO.get(month[:3], 0)
        named = any((m, d) == (month_no, int(day)) for _, m, d in days)
        if not named and (days or str(month_no) not in numbers or str(int(day)) not in numbers):
            claims.append(f"{month} {day}")
    for n in sorted(_numbers(lowered) - numbers):
        claims.append(n)
    for state in STATES:
        if re.search(rf"\b{state}\b", lowered) and not re.search(rf"\b{state}\b", text):
            claims.append(state)
    return claims
