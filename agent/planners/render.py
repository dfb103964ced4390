"""Template rendering for questions and answers: `{name}` and `{name|filter}` placeholders."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

_FIELD = re.compile(r"\{(\w+)(?:\|(\w+))?\}")


def _date(v: Any) -> str:
    try:
        d = date.fromisoformat(str(v)[:10])
    except ValueError:
        return str(v)
    return f"{d:%a, %b} {d.day}, {d.year} ({d.isoformat()})"


def _money(v: Any) -> str:
    try:
        return f"${float(v):,.2f}"
    except (TypeError, ValueError):
        return str(v)


def _list(v: Any) -> str:
    if isinstance(v, list | tuple):
        items = [str(x) for x in v]
        return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else ""
    return str(v)


FILTERS = {"date": _date, "money": _money, "list": _list, "title": lambda v: str(v).replace("_", " ")}


def render(template: str, values: dict[str, Any]) -> str:
    """Fill placeholders; an unknown name renders as-is so a typo shows rather than crashing a turn."""

    def sub(m: re.Match[str]) -> str:
        name, flt = m.group(1), m.group(2)
        if name not in values or values[name] is None:
            return m.group(0)
        value = values[name]
        return FILTERS[flt](value) if flt in FILTERS else str(value)

    return _FIELD.sub(sub, template)
