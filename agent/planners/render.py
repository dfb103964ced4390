"""Template rendering for questions and answers: `{name}` and `{name|filter}` placeholders."""

from __future__ import annotations

from datetime import date
from typing import Any

from agent.domain.catalog import money
from agent.text import Placeholder, fill


def _date(v: Any) -> str:
    try:
        d = date.fromisoformat(str(v)[:10])
    except ValueError:
        return str(v)
    return f"{d:%a, %b} {d.day}, {d.year} ({d.isoformat()})"


def money_text(v: Any, currency: str = "$") -> str:
    try:
        return money(float(v), currency)
    except (TypeError, ValueError):
        return str(v)


def _list(v: Any) -> str:
    if isinstance(v, list | tuple):
        items = [str(x) for x in v]
        return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else ""
    return str(v)


def _list_or(v: Any) -> str:
    if isinstance(v, list | tuple) and len(v) > 1:
        return ", ".join(str(x) for x in v[:-1]) + " or " + str(v[-1])
    return _list(v)


def _title(v: Any) -> str:
    return str(v).replace("_", " ")


FILTERS = {"date": _date, "list": _list, "list_or": _list_or, "title": _title}


def filtered(value: Any, name: str, currency: str = "$") -> str:
    """`value` through the filter `name` (`money` in the store's currency); an unknown filter leaves it as text."""
    if name == "money":
        return money_text(value, currency)
    return FILTERS[name](value) if name in FILTERS else str(value)


def render(template: str, values: dict[str, Any], currency: str = "$") -> str:
    """Fill placeholders; an unknown name renders as-is so a typo shows rather than crashing a turn.

    Args:
        currency: the store's currency symbol (config/store.yaml), for `{amount|money}`.
    """

    def text_of(p: Placeholder) -> str | None:
        value = values.get(p.name)
        return None if value is None else filtered(value, p.filter, currency)

    return fill(template, text_of)
