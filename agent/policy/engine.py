"""Policy engines: allow-all (tests, minimal setups) and the YAML rule engine (config/policies.yaml).

The rule engine looks up what the rules read, lazily and once per call: the order named by the
call's `order_id` (through the DataSource, so refunds recorded by this bot show), the customer,
the session, counters (refunds in the last 30 days) and per-tier limits.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from agent.domain.contexts import PolicyContext
from agent.domain.types import PolicyDecision, ToolCall, utcnow
from agent.policy.rules import Condition, Outcome, PolicyFile, Rule
from agent.sources import DataSource
from agent.storage import RefundHistory
from agent.templates import names, render

_MISSING = object()


class Facts:
    """The values one tool call's rules may read, looked up on first use."""

    def __init__(
        self,
        call: ToolCall,
        context: PolicyContext,
        policy: PolicyFile,
        data: DataSource,
        refunds: RefundHistory | None,
        now: datetime,
        currency: str = "$",
    ):
        self.currency = currency
        self.call, self.context, self.policy = call, context, policy
        self.data, self.refunds, self.now = data, refunds, now
        self.params = dict(call.params)
        self.seen: dict[str, Any] = {}
        self._order: Any = _MISSING

    async def get(self, name: str) -> Any:
        value = await self._lookup(name)
        self.seen[name] = value
        return value

    async def _lookup(self, name: str) -> Any:
        root, _, field = name.partition(".")
        ctx = self.context
        if root == "tool":
            return self.call.tool_name
        if root == "agent":
            return ctx.agent
        if root == "intent":
            return ctx.intent_id
        if root == "params":
            return self.params.get(field)
        if root == "customer":
            return (ctx.customer or {}).get(field)
        if root == "order":
            return (await self._load_order() or {}).get(field)
        if root == "session":
            session = {
                "channel": ctx.session.channel_type.value,
                "customer_id": ctx.session.customer_id,
                "handoff": ctx.session.handoff.status if ctx.session.handoff else None,
            }
            return session.get(field)
        if root == "counters":
            return await self._counter(field)
        if root == "limits":
            by_tier = self.policy.limits.get(field, {})
            tier = (ctx.customer or {}).get("tier")
            return by_tier.get(str(tier), by_tier.get("default"))
        return None

    async def _load_order(self) -> dict[str, Any] | None:
        if self._order is _MISSING:
            order_id = self.params.get("order_id")
            source = self.context.reads or self.data  # the turn's reads: the tool sees the same order
            self._order = await source.get_order(str(order_id)) if order_id else None
        return self._order  # type: ignore[no-any-return]

    async def _counter(self, name: str) -> int | None:
        customer_id = self.context.session.customer_id
        if name == "refunds_30d" and self.refunds is not None and customer_id:
            return await self.refunds.count_refunds(customer_id, self.now - timedelta(days=30))
        return None

    async def render(self, template: str) -> str:
        """A reason with its `{fact.name}` and `{fact.name|money}` placeholders filled; a fact
        with no value reads "unknown"."""
        # Facts are looked up asynchronously (an order, a refund count): all of them first.
        facts: dict[str, Any] = {}
        for name in names(template):
            value = await self.get(name)
            root, _, field = name.rpartition(".")
            into = facts.setdefault(root, {}) if root else facts
            into[field] = "unknown" if value is None else value
        return render(template, facts, self.currency)


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def compare(op: str, left: Any, right: Any) -> bool:
    """One comparison; numbers given as text ("20") compare as numbers, a missing value never orders."""
    if op == "exists":
        return (left is not None) == bool(right)
    if op in ("in", "not_in"):
        return (left in right) == (op == "in")
    ln, rn = _number(left), _number(right)
    if ln is not None and rn is not None:
        left, right = ln, rn
    if op == "eq":
        return bool(left == right)
    if op == "ne":
        return bool(left != right)
    if left is None or right is None or ln is None or rn is None:
        return False
    return {"gt": ln > rn, "gte": ln >= rn, "lt": ln < rn, "lte": ln <= rn}[op]


async def holds(cond: Condition, facts: Facts) -> bool:
    if cond.all is not None:
        for c in cond.all:
            if not await holds(c, facts):
                return False
        return True
    if cond.any is not None:
        for c in cond.any:
            if await holds(c, facts):
                return True
        return False
    if cond.not_ is not None:
        return not await holds(cond.not_, facts)
    op = cond.op or "exists"
    expected = cond.operand
    if isinstance(expected, dict) and "fact" in expected:
        expected = await facts.get(str(expected["fact"]))
    return compare(op, await facts.get(str(cond.fact)), expected)


class YamlPolicyEngine:
    """
    Args:
        policy: the loaded policy file (`agent.policy.rules.load_policies`).
        data: where orders and customers are looked up.
        refunds: counts refunds for `counters.refunds_30d`; None leaves the counter unknown.
        clock: the current UTC time; tests pass their own.
        currency: the store's sign, for `{fact|money}` in reasons.
        approvals: the tools whose declaration says they need the requester's yes
            (`Tool.needs_approval`): a call the rules allow is confirmed first.
    """

    def __init__(
        self,
        policy: PolicyFile,
        data: DataSource,
        refunds: RefundHistory | None = None,
        clock: Callable[[], datetime] = utcnow,
        currency: str = "$",
        approvals: Collection[str] = frozenset(),
    ):
        self.policy, self.data, self.refunds, self.clock = policy, data, refunds, clock
        self.currency = currency
        self.approvals = frozenset(approvals)

    async def validate(self, call: ToolCall, context: PolicyContext) -> PolicyDecision:
        facts = Facts(call, context, self.policy, self.data, self.refunds, self.clock(), self.currency)
        changed = False
        for param, fact in self.policy.defaults.get(call.tool_name, {}).items():
            if facts.params.get(param) in (None, "") and (value := await facts.get(fact)) is not None:
                facts.params[param], changed = value, True
        for rule in self.policy.rules:
            if rule.tools and call.tool_name not in rule.tools:
                continue
            if rule.when is None or await holds(rule.when, facts):
                return await self._decide(rule.id, self._asked(call, rule.outcome), rule, facts, changed)
        outcome = self._asked(call, self.policy.default)
        rule_id = "needs_approval" if outcome != self.policy.default else "default"
        return await self._decide(rule_id, outcome, None, facts, changed)

    def _asked(self, call: ToolCall, outcome: Outcome) -> Outcome:
        """What the rules allow of a tool that needs a yes still waits for it."""
        return "require_confirmation" if outcome == "allow" and call.tool_name in self.approvals else outcome

    async def _decide(
        self, rule_id: str, outcome: str, rule: Rule | None, facts: Facts, changed: bool
    ) -> PolicyDecision:
        reason = await facts.render(rule.reason) if rule and rule.reason else ""
        return PolicyDecision(
            allowed=outcome in ("allow", "require_confirmation"),
            violations=[reason] if outcome in ("deny", "require_escalation") else [],
            requires_escalation=outcome == "require_escalation",
            requires_confirmation=outcome == "require_confirmation",
            rule=rule_id,
            offer_human=bool(rule and rule.offer_human and outcome == "deny"),
            alert=rule.alert if rule else True,
            params=facts.params if changed else None,
            facts=dict(facts.seen),
        )


@runtime_checkable
class PolicyEngine(Protocol):
    async def validate(self, call: ToolCall, context: PolicyContext) -> PolicyDecision: ...
