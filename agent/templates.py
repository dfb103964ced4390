"""The one templating of every text a customer reads: jinja2's sandboxed environment.

Templates are config (intents.yaml's questions and answers, `Messages`, policy reasons) and keep
the config's short form: `{name}`, `{name|filter}`, `{fact.name}` are jinja's `{{ ... }}` with one
brace. A name with no value renders as written, so a typo shows in the reply rather than failing a
turn; values are text put in, never parsed as a template. The filters: `money` (in the store's
currency), `date`, `list`, `list_or` and `title`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import date
from typing import Any

from jinja2 import ChainableUndefined, TemplateError, meta, nodes, pass_context
from jinja2.runtime import Context
from jinja2.sandbox import SandboxedEnvironment

__all__ = ["TemplateError", "check", "filled", "money", "money_text", "names", "render"]

_CURRENCY = "_currency"  # the context variable `money` reads the store's currency from


class _AsWritten:
    """The value of a placeholder given none: it renders as written ("{nmae}")."""

    def __init__(self, name: str):
        self.name = name

    def __str__(self) -> str:
        return "{" + self.name + "}"


def money(value: float, currency: str) -> str:
    """An amount in a currency: whole amounts without cents ("฿3,290", "$12.50")."""
    return f"{currency}{value:,.0f}" if float(value).is_integer() else f"{currency}{value:,.2f}"


def money_text(v: Any, currency: str = "$") -> str:
    """An amount in the store's currency ("฿3,290"); anything that is no number as it is."""
    try:
        return money(float(v), currency)
    except (TypeError, ValueError):
        return str(v)


def _date(v: Any) -> str:
    try:
        d = date.fromisoformat(str(v)[:10])
    except ValueError:
        return str(v)
    return f"{d:%a, %b} {d.day}, {d.year} ({d.isoformat()})"


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


_ENV = SandboxedEnvironment(
    variable_start_string="{",
    variable_end_string="}",
    undefined=ChainableUndefined,  # "{order.amount}" of no order renders nothing rather than failing
    autoescape=False,  # chat text, not HTML: each channel escapes for its own markup
    keep_trailing_newline=True,
)


def _as_written(name: str, f: Callable[..., str]) -> Callable[..., str]:
    """The filter `f`, which leaves a placeholder with no value as written, filter and all
    ("{amount|money}"), so a later rendering with the value still applies it."""

    @pass_context
    def apply(context: Context, v: Any) -> str:
        if isinstance(v, _AsWritten):
            return "{" + f"{v.name}|{name}" + "}"
        return f(context, v) if name == "money" else f(v)

    return apply


_FILTERS: dict[str, Callable[..., str]] = {
    "money": lambda context, v: money_text(v, context.get(_CURRENCY, "$")),
    "date": _date,
    "list": _list,
    "list_or": _list_or,
    "title": _title,
}
_ENV.filters.update({name: _as_written(name, f) for name, f in _FILTERS.items()})


@functools.lru_cache(maxsize=2048)
def _compiled(template: str) -> tuple[Any, frozenset[str]]:
    """The template compiled, and the names its placeholders start with."""
    return _ENV.from_string(template), frozenset(meta.find_undeclared_variables(_ENV.parse(template)))


def check(template: str) -> None:
    """Raise `TemplateError` when the template is not one (config is checked as it loads)."""
    _compiled(template)


def render(template: str, values: dict[str, Any] | None = None, currency: str = "$") -> str:
    """The template with its placeholders filled from `values`; a value of None counts as none.

    Args:
        currency: the store's currency symbol (config/store.yaml), for `{amount|money}`.
    """
    if "{" not in template:
        return template  # no placeholder, block or comment: the text as it is
    given = {k: v for k, v in (values or {}).items() if v is not None}
    try:
        compiled, named = _compiled(template)
        unset = {name: _AsWritten(name) for name in named if name not in given}
        return str(compiled.render(given | unset | {_CURRENCY: currency}))
    except TemplateError:
        return template  # config is checked as it loads; a template that is none still shows


def filled(templates: dict[str, str], values: dict[str, Any], currency: str = "$") -> dict[str, str]:
    """Each template whose every placeholder has a value, rendered ("title": "{task_title}" ->
    the task's title); one that names a value not given is left out."""
    return {
        key: render(template, values, currency)
        for key, template in templates.items()
        if all(values.get(name) is not None for name in names(template))
    }


@functools.lru_cache(maxsize=2048)
def names(template: str) -> frozenset[str]:
    """The values a template names, dotted as written ("order_id", "order.amount")."""
    try:
        tree = _ENV.parse(template)
    except TemplateError:
        return frozenset()
    found: set[str] = set()
    for node in tree.find_all((nodes.Name, nodes.Getattr)):
        if isinstance(node, nodes.Getattr) and isinstance(node.node, nodes.Name):
            found.add(f"{node.node.name}.{node.attr}")
        elif isinstance(node, nodes.Name) and node.ctx == "load":
            found.add(node.name)
    roots = {n.split(".", 1)[0] for n in found if "." in n}
    return frozenset(n for n in found if n not in roots)
