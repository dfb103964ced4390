"""The policy file (config/policies.yaml): rules with composable conditions, validated at startup.

A rule names the tools it covers, a condition over facts (`params.amount`, `order.status`,
`customer.tier`, `counters.refunds_30d`, `limits.refund_limit`, ...) and an outcome. Rules are read
top to bottom; the first whose tools match and whose condition holds decides the call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent.config.files import load_yaml_model
from agent.config.schema import SafeLoader, checked_templates
from agent.errors import ConfigError

Outcome = Literal["allow", "deny", "require_confirmation", "require_escalation"]

# Fact roots the engine knows how to look up; anything else in a policy file is a typo.
FACT_ROOTS = frozenset({"tool", "agent", "intent", "params", "customer", "order", "session", "counters", "limits"})
COUNTERS = frozenset({"refunds_30d"})
COMPARISONS = ("eq", "ne", "in", "not_in", "gt", "gte", "lt", "lte", "exists")


class Condition(BaseModel):
    """A leaf `{fact: NAME, <op>: VALUE}` or a composition `{all: [...]}`, `{any: [...]}`, `{not: ...}`.

    A VALUE may itself be `{fact: NAME}` to compare two facts (`params.amount` gt `order.amount`).
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    fact: str | None = None  # the fact a leaf tests (params.amount, customer.tier, order.status, ...)
    eq: Any = None  # equal to
    ne: Any = None  # not equal to
    in_: list[Any] | None = Field(None, alias="in")  # one of
    not_in: list[Any] | None = None  # none of
    gt: Any = None  # greater than
    gte: Any = None  # greater than or equal to
    lt: Any = None  # less than
    lte: Any = None  # less than or equal to
    exists: bool | None = None  # the fact has a value (true) or has none (false)
    all: list[Condition] | None = None  # every condition holds
    any: list[Condition] | None = None  # at least one holds
    not_: Condition | None = Field(None, alias="not")  # the condition does not hold

    @property
    def op(self) -> str | None:
        given = [o for o in COMPARISONS if (o if o != "in" else "in_") in self.model_fields_set]
        return given[0] if given else None

    @property
    def operand(self) -> Any:
        """What a leaf compares its fact with (a value, or `{fact: NAME}`)."""
        values = {"eq": self.eq, "ne": self.ne, "in": self.in_, "not_in": self.not_in, "exists": self.exists}
        return (values | {"gt": self.gt, "gte": self.gte, "lt": self.lt, "lte": self.lte})[self.op or "exists"]

    @model_validator(mode="after")
    def _one_shape(self) -> Condition:
        ops = [o for o in COMPARISONS if (o if o != "in" else "in_") in self.model_fields_set]
        groups = [g for g in ("all", "any", "not_") if g in self.model_fields_set]
        if groups and (ops or self.fact is not None):
            raise ValueError("a condition is either a comparison on `fact` or one of all/any/not")
        if len(groups) > 1:
            raise ValueError("use one of all/any/not per condition; nest them to combine")
        if not groups:
            if self.fact is None:
                raise ValueError("a comparison needs `fact`")
            if len(ops) != 1:
                raise ValueError(f"a comparison needs exactly one of {', '.join(COMPARISONS)}")
        return self

    def facts(self) -> list[str]:
        """Every fact name this condition reads, including fact references in values."""
        out = [self.fact] if self.fact else []
        for v in (self.eq, self.ne, self.gt, self.gte, self.lt, self.lte):
            if isinstance(v, dict) and "fact" in v:
                out.append(str(v["fact"]))
        for child in [*(self.all or []), *(self.any or []), *([self.not_] if self.not_ else [])]:
            out += child.facts()
        return out


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str  # named in telemetry, alerts and startup errors
    description: str = ""  # for the people who read the file
    tools: list[str] = Field(default_factory=list)  # empty = every tool
    when: Condition | None = None  # no condition = always
    outcome: Outcome  # what the first matching rule decides
    reason: str = ""  # shown to the user on deny; to admins and the user on escalation
    offer_human: bool = False  # after a deny, offer the user a person
    alert: bool = True  # tell admins of a deny (telemetry records every decision either way)

    @model_validator(mode="after")
    def _reason_given(self) -> Rule:
        if self.outcome in ("deny", "require_escalation") and not self.reason:
            raise ValueError(f"outcome {self.outcome} needs a `reason` the user is shown")
        checked_templates([self.reason])
        return self


class PolicyFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    default: Outcome = "allow"  # the decision when no rule matches
    # name -> tier -> value; `limits.<name>` is the value for the customer's tier (or `default`).
    limits: dict[str, dict[str, float]] = Field(default_factory=dict)
    # tool -> param -> fact: a missing param takes the looked-up value (a refund without an amount
    # is the whole order), so a confirmation always names the exact action.
    defaults: dict[str, dict[str, str]] = Field(default_factory=dict)
    rules: list[Rule] = Field(default_factory=list)


def _check_fact(name: str, policy: PolicyFile) -> str | None:
    root, _, rest = name.partition(".")
    if root not in FACT_ROOTS:
        return f"unknown fact {name!r}; facts start with one of {', '.join(sorted(FACT_ROOTS))}"
    if root in ("params", "customer", "order", "session", "counters", "limits") and not rest:
        return f"fact {name!r} needs a field, e.g. {root}.<name>"
    if root == "counters" and rest not in COUNTERS:
        return f"unknown counter {rest!r}; known: {', '.join(sorted(COUNTERS))}"
    if root == "limits" and rest not in policy.limits:
        return f"no limit named {rest!r} under limits:"
    return None


def load_policies(path: Path, tools: set[str] | None = None) -> PolicyFile:
    """Load and cross-check a policy file; every error names the rule it is in.

    Args:
        path: the YAML file; missing means no rules (allow everything).
        tools: the registered tool names, to catch a rule naming a tool that does not exist.
    """
    try:
        policy = load_yaml_model(path, PolicyFile, optional=True)
    except ConfigError as e:
        raise _name_rule(e, path) from e
    seen: set[str] = set()
    for i, rule in enumerate(policy.rules):
        field = f"rules.{i} ({rule.id})"
        if rule.id in seen:
            raise ConfigError(str(path), f"duplicate rule id {rule.id!r}", field=field)
        seen.add(rule.id)
        for tool in rule.tools:
            if tools is not None and tool not in tools:
                raise ConfigError(str(path), f"rule {rule.id!r}: unknown tool {tool!r}", field=f"{field}.tools")
        for name in rule.when.facts() if rule.when else []:
            if problem := _check_fact(name, policy):
                raise ConfigError(str(path), f"rule {rule.id!r}: {problem}", field=f"{field}.when")
    for tool, params in policy.defaults.items():
        for param, fact in params.items():
            if problem := _check_fact(fact, policy):
                raise ConfigError(str(path), problem, field=f"defaults.{tool}.{param}")
    return policy


def _name_rule(error: ConfigError, path: Path) -> ConfigError:
    """Add the rule's id to a schema error located inside `rules.N`."""
    parts = error.field.split(".")
    if len(parts) < 2 or parts[0] != "rules" or not parts[1].isdigit():
        return error
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=SafeLoader)
        rule_id = raw["rules"][int(parts[1])].get("id", "?")
    except (yaml.YAMLError, KeyError, IndexError, TypeError, AttributeError):
        return error
    return ConfigError(error.file, f"rule {rule_id!r}: {error.problem}", line=error.line, field=error.field)
