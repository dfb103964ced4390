"""The sales specialist: recommends in-stock items for a category and budget, and checks stock.

Pass 1 asks the one question the goal is blocked on, or requests `inventory_query`; pass 2 phrases
the answer from the tool's result only, so no price or stock figure is ever made up. A
recommendation leaves the goal open (the customer may ask about one of the options, or refine),
and remembers what it recommended in the goal's slots so "the one you just recommended" resolves.
"""

from __future__ import annotations

import re
from typing import Any

from agent.catalog import StoreSettings, money
from agent.contexts import AgentRequest
from agent.interfaces import Planner, TurnLog
from agent.planners.budget_words import parse_budget
from agent.session import Goal, GoalStatus, SessionState
from agent.types import AskUser, Plan, Respond, ToolCall

# Words that point back at something the bot said rather than name a product.
_REFERENCE = re.compile(r"\b(it|that|this|those|these|one|ones|recommend\w*|suggest\w*|mentioned|same)\b", re.I)
_CHEAPEST = re.compile(r"\b(?:cheap\w*|least expensive|lowest price|most affordable|budget one)\b")
_DEAREST = re.compile(r"\b(?:most expensive|priciest|pricier|highest price|top of the range|best one)\b")
_ORDINALS = {"first": 0, "1st": 0, "top": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "last": -1}


def latest_recommendation(state: SessionState, exclude: str) -> list[dict[str, Any]]:
    """What the bot recommended most recently in this session, best first."""
    # A recommendation the user called off or left behind is no longer "the one you recommended".
    ended = (GoalStatus.cancelled, GoalStatus.abandoned)
    goals = [
        g for g in state.goals.values() if g.id != exclude and g.slots.get("recommended") and g.status not in ended
    ]
    if not goals:
        return []
    return list(max(goals, key=lambda g: g.updated_at).slots["recommended"])


class SalesPlanner:
    """
    Args:
        store: the store's settings (currency, how many options to recommend).
        questions: the planner whose templates phrase questions (the template planner).
    """

    reads_preferences = True  # disliked brands and budgets shape its recommendations

    def __init__(self, store: StoreSettings, questions: Planner):
        self.store = store
        self.questions = questions

    def question(self, intent_id: str, slot: str) -> str:
        return self.questions.question(intent_id, slot)

    def _money(self, value: float) -> str:
        return money(value, self.store.currency)

    async def plan(self, request: AgentRequest, turn: TurnLog | None = None) -> Plan:
        if request.intent.id == "check_stock":
            return self._check_stock(request)
        return self._recommend(request)

    # recommend_item

    def _recommend(self, r: AgentRequest) -> Plan:
        goal = r.goal
        plan = Plan(intent_id=r.intent.id, goal_id=goal.id)
        slots = dict(goal.slots)
        notes: list[str] = []
        if slots.get("budget") not in (None, "") and not isinstance(slots["budget"], int | float):
            amount = parse_budget(slots["budget"])
            plan.slots_patch["budget"] = amount
            slots["budget"] = amount
            if amount is None:
                plan.steps = [
                    AskUser(
                        param="budget",
                        prompt="I couldn't read that as an amount. " + self.question(r.intent.id, "budget"),
                    )
                ]
                return plan
        stale = slots.get("budget_for")
        if stale and stale[0] != slots.get("category") and stale[1] == slots.get("budget"):
            # A new kind of product with the previous one's budget: that budget was for the other thing.
            slots["budget"] = plan.slots_patch["budget"] = None
        missing = [p for p in r.intent.required_params if slots.get(p) in (None, "")]
        if missing:
            plan.steps = [AskUser(param=missing[0], prompt=self.question(r.intent.id, missing[0]))]
            return plan
        if not r.results:
            return self._query(plan, slots, r)
        result = r.results[-1]
        if not result.success or result.data is None:
            plan.steps = [
                Respond(when="error", message="I couldn't check our inventory just now. Please try again in a moment.")
            ]
            return plan
        text, recommended = self._phrase(result.data, slots, r)
        plan.steps = [Respond(when="post", message=" ".join([*notes, text]))]
        plan.goal_status = "done"  # answered; the goal stays open for follow-ups (stays_open)
        plan.slots_patch |= {
            "recommended": recommended,
            "candidates": [i["sku"] for i in recommended],
            "budget_for": [slots["category"], slots["budget"]],
        }
        return plan

    def _query(self, plan: Plan, slots: dict[str, Any], r: AgentRequest) -> Plan:
        prefs = r.preferences
        brand = slots.get("brand")
        if brand and prefs and str(brand).lower() in {b.lower() for b in prefs.disliked_brands}:
            # "not <brand>" names the brand too: the dislike wins over the brand filter.
            brand = plan.slots_patch["brand"] = None
        disliked = [b for b in (prefs.disliked_brands if prefs else []) if not brand or b.lower() != str(brand).lower()]
        features = [str(slots["feature"])] if slots.get("feature") else []
        features += [f for f in (prefs.preferred_features if prefs else []) if f not in features]
        params = {
            "category": str(slots["category"]),
            "max_price": float(slots["budget"]),
            "brand": brand,
            "features": features,
            "exclude_brands": disliked,
            "prefer_brands": prefs.preferred_brands if prefs else [],
            "in_stock_only": True,
            "limit": self.store.max_recommendations,
        }
        what = f"{slots.get('feature', '')} {slots['category']}".strip()
        plan.steps = [
            Respond(when="pre", message=f"Looking for a {what} up to {self._money(float(slots['budget']))}..."),
            ToolCall(tool_name="inventory_query", params={k: v for k, v in params.items() if v not in (None, [])}),
        ]
        return plan

    def _phrase(self, data: dict[str, Any], slots: dict[str, Any], r: AgentRequest) -> tuple[str, list[dict]]:
        items, budget = data.get("items", []), self._money(float(slots["budget"]))
        what = f"{slots.get('feature', '')} {slots['category']}".strip()
        brief = bool(r.preferences and r.preferences.communication_style == "brief")
        lines = []
        if data.get("excluded_brands"):
            lines.append(f"(I left out {', '.join(data['excluded_brands'])}, since you'd rather avoid that brand.)")
        if not items:
            alternatives = data.get("alternatives_over_budget", [])
            if alternatives:
                options = "; ".join(f"{a['name']} at {self._money(a['price'])}" for a in alternatives)
                lines.insert(0, f"I couldn't find an in-stock {what} within {budget}. The closest in stock: {options}.")
            else:
                lines.insert(0, f"Sorry, I couldn't find any {what} in stock within {budget}.")
            lines.append("Would a different budget or brand work?")
            return " ".join(lines), []
        count = "is 1 in-stock option" if len(items) == 1 else f"are {len(items)} in-stock options"
        head = f"Here {count} for a {what} within {budget}:"
        rows = []
        for n, i in enumerate(items, start=1):
            row = f"{n}. {i['name']} ({i['sku']}): {self._money(i['price'])}, {i['stock']} in stock"
            extra = i.get("attributes", {}).get("features")
            rows.append(row + (f" - {extra.replace('-', ' ')}" if extra and not brief else ""))
        tail = "Want me to check one of these, or narrow it down?"
        recommended = [{k: i[k] for k in ("sku", "name", "category", "price", "stock")} for i in items]
        return "\n".join([head, *rows, *lines, tail]), recommended

    # check_stock

    def _check_stock(self, r: AgentRequest) -> Plan:
        goal = r.goal
        plan = Plan(intent_id=r.intent.id, goal_id=goal.id)
        if r.results:
            return self._stock_answer(plan, goal, r.results[-1].data if r.results[-1].success else None)
        item = str(goal.slots.get("item") or "")
        recent = latest_recommendation(r.state, exclude=goal.id)
        params: dict[str, Any] = {"limit": 3}
        category = goal.slots.get("category")
        named = self._pick(recent, item, category, fallback=False) if recent else None
        chosen = named or (self._pick(recent, item, category) if recent else None)
        if chosen and (named or not item or _REFERENCE.search(item)) and not goal.slots.get("model"):
            params["sku"] = chosen["sku"]
            plan.slots_patch["item"] = chosen["name"]
            label = chosen["name"]
        elif goal.slots.get("model") or (item and not _only_reference(item)):
            query = str(goal.slots.get("model") or item)
            params["query"] = query
            plan.slots_patch["item"] = query
            # A whole question makes a poor label; the product kind reads better.
            category = goal.slots.get("category")
            label = f"the {category}" if category and not goal.slots.get("model") else query
        else:
            plan.slots_patch["item"] = None
            plan.steps = [AskUser(param="item", prompt=self.question(r.intent.id, "item"))]
            return plan
        plan.steps = [
            Respond(when="pre", message=f"Checking stock for {label}..."),
            ToolCall(tool_name="inventory_query", params=params),
        ]
        return plan

    @staticmethod
    def _pick(recent: list[dict], text: str, category: object, fallback: bool = True) -> dict | None:
        """The recommended item the text points at; with `fallback`, the first that fits the category."""
        lowered = text.lower()
        words = re.findall(r"[a-z0-9#]+", lowered)
        if _CHEAPEST.search(lowered):
            return min(recent, key=lambda i: float(i.get("price", 0)))
        if _DEAREST.search(lowered):
            return max(recent, key=lambda i: float(i.get("price", 0)))
        for word, index in _ORDINALS.items():
            if word in words and -len(recent) <= index < len(recent):
                return recent[index]
        if (m := re.search(r"(?:option|number|no\.?|#)\s*(\d)", lowered)) and 0 < int(m.group(1)) <= len(recent):
            return recent[int(m.group(1)) - 1]
        # "is the <brand> any good?": a word of one item's name that the others do not share.
        named = [
            i
            for i in recent
            if set(re.findall(r"[a-z0-9-]+", str(i.get("name", "")).lower())) & _distinct(recent) & set(words)
        ]
        if len(named) == 1:
            return named[0]
        if not fallback:
            return None
        if category:
            # "that mouse" after recommending laptops points at nothing we recommended.
            same = [i for i in recent if str(i.get("category", "")).lower() == str(category).lower()]
            return same[0] if same else None
        return recent[0]

    def _stock_answer(self, plan: Plan, goal: Goal, data: dict | None) -> Plan:
        plan.goal_status = "done"
        if data is None:
            plan.steps = [
                Respond(when="error", message="I couldn't check our inventory just now. Please try again in a moment.")
            ]
            plan.goal_status = "failed"
            return plan
        items = data.get("items", [])
        if not items:
            text = (
                f"I couldn't find \"{goal.slots.get('item', 'that')}\" in our inventory, so I can't say it's available."
            )
        elif len(items) == 1:
            i = items[0]
            if i["stock"] > 0:
                price = self._money(i["price"])
                text = f"The {i['name']} ({i['sku']}) is in stock: {i['stock']} available at {price}."
                if features := i.get("attributes", {}).get("features"):
                    text += f" Features: {features.replace('-', ' ').replace(' ', ', ')}."
            else:
                text = f"Sorry, the {i['name']} ({i['sku']}) is out of stock right now."
        else:
            rows = [
                f"- {i['name']} ({i['sku']}): "
                + (f"{i['stock']} in stock at {self._money(i['price'])}" if i["stock"] > 0 else "out of stock")
                for i in items
            ]
            text = "\n".join(["I found a few matches:", *rows])
        plan.steps = [Respond(when="post", message=text)]
        return plan


def _distinct(items: list[dict]) -> set[str]:
    """Name words that only one of the items has."""
    names = [set(re.findall(r"[a-z0-9-]+", str(i.get("name", "")).lower())) for i in items]
    return {w for n in names for w in n if sum(w in m for m in names) == 1 and len(w) > 1}


def _only_reference(text: str) -> bool:
    """True when the text names nothing beyond pointing words ("is it in stock?")."""
    rest = _REFERENCE.sub(" ", text.lower())
    rest = re.sub(r"\b(is|are|the|in|stock|still|available|do|you|have|just|a|an|any|left|there|by|way)\b", " ", rest)
    return not re.search(r"[a-z0-9]{2,}", rest)
