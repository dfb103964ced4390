"""Reading a budget the way people write one: "1500", "35k", "$1,200", "under 800", "1.5k baht"."""

from __future__ import annotations

import re

_AMOUNT = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(k|grand|thousand)?\b", re.I)


def parse_budget(value: object) -> float | None:
    """The amount in a budget phrase, or None if there is none (or it is not positive)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if value > 0 else None
    m = _AMOUNT.search(str(value or ""))
    if not m:
        return None
    digits = m.group(1).replace(",", "")
    try:
        amount = float(digits)
    except ValueError:
        return None
    if m.group(2):
        amount *= 1000
    return amount if amount > 0 else None
