"""Reading a budget the way people write one: "1500", "35k", "$1,200", "under 800", "1.5k baht"."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence


@functools.lru_cache(maxsize=8)
def _amount(thousands: tuple[str, ...]) -> re.Pattern[str]:
    """A number, with one of the words that make it thousands after it (config vocabulary `thousands`)."""
    words = "|".join(re.escape(w) for w in sorted(thousands, key=len, reverse=True))
    return re.compile(rf"(\d[\d,]*(?:\.\d+)?)\s*({words})?\b" if words else r"(\d[\d,]*(?:\.\d+)?)()\b", re.I)


def parse_budget(value: object, thousands: Sequence[str] = ()) -> float | None:
    """The amount in a budget phrase, or None if there is none (or it is not positive)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if value > 0 else None
    m = _amount(tuple(thousands)).search(str(value or ""))
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
