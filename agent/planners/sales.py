"""The sales specialist: recommends in-stock items for a category and budget, and checks stock.

Pass 1 asks the one question the goal is blocked on, or requests `inventory_query`; pass 2 phrases
the answer from the tool's result only, so no price or stock figure is ever made up. A
recommendation leaves the goal open (the customer may ask about one of the options, or refine),
and remembers what it recommended in the goal's slots so "the one you just recommended" resolves.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agent.config.schema import ANY
from agent.context.log import TurnLog
from agent.conversation.session import Goal, GoalStatus, Speaker
from agent.domain.catalog import StoreSettings
from agent.domain.contexts import AgentRequest
from agent.domain.types import AskUser, Plan, Respond, ToolCall
from agent.planners.base import Planner
from agent.planners.budget_words import parse_budget
from agent.planners.registry import PlannerNeeds, planner
from agent.templates import money
from agent.text import phrase_finder, stem, words, written
from agent.tools.inventory import GENERIC_WORDS

# The attribute that lists what an item is known for (a tag list): a tag it lacks says nothing.
OPEN_ATTRIBUTE = "features"


def latest_recommendation(me: Speaker, exclude: str) -> list[dict[str, Any]]:
    """What the bot recommended most recently in this session, best first."""
    # A recommendation the user called off or left behind is no longer "the one you recommended".
    ended = (GoalStatus.cancelled, GoalStatus.abandoned)
    goals = [g for g in me.goals.values() if g.id != exclude and g.slots.get("recommended") and g.status not in ended]
    if not goals:
        return []
    return list(max(goals, key=lambda g: g.updated_at).slots["recommended"])


class SalesPlanner:
    """
    Args:
        store: the store's settings (currency, how many options to recommend).
        questions: the planner whose templates phrase questions (the template planner).
        thousands: the words that make a budget's number thousands ("35k"; vocabulary `thousands`).
    """

    reads_preferences = True  # disliked brands and budgets shape its recommendations

    def __init__(self, store: StoreSettings, questions: Planner, thousands: Sequence[str] = ()):
        self.store = store
        self.questions = questions
        self.thousands = thousands
        self._attribute_words = phrase_finder(store.inventory.attribute_words)

    def question(self, intent_id: str, slot: str) -> str:
        return self.questions.question(intent_id, slot)

    def _money(self, value: float) -> str:
        return money(value, self.store.currency)

    def _asking(self, question: str) -> str:
        """The question with the store's other words for its attributes read as their labels
        ("what colors ..." asks about "colours")."""
        if self._attribute_words is None:
            return question
        words = self.store.inventory.attribute_words
        return self._attribute_words.sub(lambda m: words[m.group(1).lower()], question)

    async def plan(self, request: AgentRequest, turn: TurnLog | None = None) -> Plan:
        if request.intent.handling == "stock":
            return self._check_stock(request)
        return self._recommend(request)

    # recommend_item

    def _recommend(self, r: AgentRequest) -> Plan:
        goal = r.goal
        plan = Plan(intent_id=r.intent.id, goal_id=goal.id)
        slots = dict(goal.slots)
        notes: list[str] = []
        if slots.get("budget") not in (None, "", ANY) and not isinstance(slots["budget"], int | float):
            amount = parse_budget(slots["budget"], self.thousands)
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
            "listed_turn": r.state.turns,  # follow-ups after this turn are about these items
            # What a follow-up may ask about by name ("when will it be back?" asks "back in stock").
            "attribute_labels": list(self.store.inventory.attributes),
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
        liked = [f for f in (prefs.preferred_features if prefs else []) if f not in features]
        ceiling = self._ceiling(slots)
        params = {
            "category": str(slots["category"]),
            "max_price": ceiling,
            "brand": brand,
            "features": features,
            "prefer_features": liked,
            "exclude_brands": disliked,
            "prefer_brands": prefs.preferred_brands if prefs else [],
            "in_stock_only": True,
            "limit": self.store.max_recommendations,
        }
        what = _what(slots, brand)
        plan.steps = [
            Respond(when="pre", message=f"Looking for a {what}{self._within(ceiling, 'up to')}..."),
            ToolCall(tool_name=r.intent.tool or "", params={k: v for k, v in params.items() if v not in (None, [])}),
        ]
        return plan

    @staticmethod
    def _ceiling(slots: dict[str, Any]) -> float | None:
        """The most the customer will pay; None when they said the price sets no limit."""
        return None if slots["budget"] == ANY else float(slots["budget"])

    def _within(self, ceiling: float | None, word: str) -> str:
        return f" {word} {self._money(ceiling)}" if ceiling is not None else ""

    def _phrase(self, data: dict[str, Any], slots: dict[str, Any], r: AgentRequest) -> tuple[str, list[dict]]:
        items, budget = data.get("items", []), self._within(self._ceiling(slots), "within")
        what = _what(slots, slots.get("brand"))
        brief = bool(r.preferences and r.preferences.communication_style == "brief")
        lines = []
        if data.get("excluded_brands"):
            lines.append(f"(I left out {', '.join(data['excluded_brands'])}, since you'd rather avoid that brand.)")
        if not items:
            alternatives = data.get("alternatives_over_budget", [])
            others = data.get("alternatives_without_features", [])
            if alternatives:
                options = "; ".join(f"{a['name']} at {self._money(a['price'])}" for a in alternatives)
                lines.insert(0, f"I couldn't find an in-stock {what}{budget}. The closest in stock: {options}.")
            elif others:
                options = "; ".join(f"{a['name']} at {self._money(a['price'])}" for a in others)
                kind = f"{slots['category']} without it" if slots.get("feature") else str(slots["category"])
                lines.insert(0, f"I couldn't find an in-stock {what}{budget}. The closest: a {kind}, {options}.")
            else:
                lines.insert(0, f"Sorry, I couldn't find any {what} in stock{budget}.")
            lines.append("Would a different budget or brand work?" if budget else "Would a different brand work?")
            return " ".join(lines), []
        count = "is 1 in-stock option" if len(items) == 1 else f"are {len(items)} in-stock options"
        head = f"Here {count} for a {what}{budget}:"
        rows = []
        for n, i in enumerate(items, start=1):
            row = f"{n}. {i['name']} ({i['sku']}): {self._money(i['price'])}, {i['stock']} in stock"
            extra = i.get("attributes", {}).get("features")
            rows.append(row + (f" - {extra.replace('-', ' ')}" if extra and not brief else ""))
        tail = "Want me to check one of these, or narrow it down?"
        # What a follow-up compares the options by ("which is lighter?") comes with them.
        keep = ("sku", "name", "category", "price", "stock", "attributes")
        recommended = [{k: i[k] for k in keep if k in i} for i in items]
        return "\n".join([head, *rows, *lines, tail]), recommended

    # check_stock

    def _check_stock(self, r: AgentRequest) -> Plan:
        goal = r.goal
        plan = Plan(intent_id=r.intent.id, goal_id=goal.id)
        if r.results:
            data = r.results[-1].data if r.results[-1].success else None
            return self._stock_answer(plan, goal, data, r.state.turns)
        slots = goal.slots
        recent = latest_recommendation(r.me, exclude=goal.id)
        params: dict[str, Any] = {"limit": 3}
        if slots.get("sku") or slots.get("skus"):
            # A follow-up about listed items (agent/conversation/followups.py) names them by SKU.
            skus = [str(slots["sku"])] if slots.get("sku") else [str(s) for s in slots["skus"]]
            params = {"skus": skus, "limit": len(skus)}
            if slots.get("question"):
                params["question"] = self._asking(str(slots["question"]))
            names = {str(i.get("sku")): str(i.get("name")) for i in recent}
            label = names.get(skus[0], skus[0]) if len(skus) == 1 else f"the {len(skus)} options"
            plan.steps = [
                Respond(when="pre", message=f"Checking {label}..."),
                ToolCall(tool_name=r.intent.tool or "", params=params),
            ]
            return plan
        item = str(slots.get("item") or "")
        category = slots.get("category")
        named = _named(recent, item)
        chosen = named or (_first(recent, category) if recent else None)
        if chosen and (named or _only_reference(item, recent)) and not slots.get("model"):
            params["sku"] = chosen["sku"]
            plan.slots_patch["item"] = chosen["name"]
            label = chosen["name"]
        elif slots.get("model") or (item and not _only_reference(item, [])):
            query = str(slots.get("model") or item)
            if slots.get("model"):
                # A make and its model's first word must both match (another model of that make is
                # not the one asked for); the model pattern may take a word past the name.
                query = " ".join(query.split()[:2])
                params["whole_name"] = True
            params["query"] = query
            if item:
                # What else it asks of the product ("when will it be back?"), without its name.
                model = str(slots.get("model") or "")
                asked = re.sub(re.escape(model), " ", item, flags=re.I) if model else item
                params["question"] = self._asking(asked)
            if category:
                params["instead_category"] = str(category)  # what the store has of that kind, if not this one
            # What is said back is the product the question names, not the whole question.
            plan.slots_patch["item"] = label = _product_words(query)
        else:
            plan.slots_patch["item"] = None
            plan.steps = [AskUser(param="item", prompt=self.question(r.intent.id, "item"))]
            return plan
        plan.steps = [
            Respond(when="pre", message=f"Checking stock for {label}..."),
            ToolCall(tool_name=r.intent.tool or "", params=params),
        ]
        return plan

    def _stock_answer(self, plan: Plan, goal: Goal, data: dict | None, turn: int) -> Plan:
        plan.goal_status = "done"
        if data is None:
            plan.steps = [
                Respond(when="error", message="I couldn't check our inventory just now. Please try again in a moment.")
            ]
            plan.goal_status = "failed"
            return plan
        items = data.get("items", [])
        rank, asked = goal.slots.get("rank"), data.get("asked") or []
        unanswered = bool(goal.slots.get("yes_no") and data.get("unknown_words"))
        compared = self._compare(items, str(rank[0]), str(rank[1])) if items and isinstance(rank, list) else None
        if compared is not None and (asked or unanswered):
            items = [compared[0]]  # "is the cheapest one any good for typing?" asks about the cheapest
        if compared is not None and len(items) > 1:
            text = compared[1]
        elif items and asked:
            text = "\n".join(self._about(i, asked) for i in items)
        elif items and unanswered:
            # A yes/no question the data has no answer to: say so, and what is known.
            text = "\n".join(
                f"I don't know that about the {i['name']} ({i['sku']}): our listing doesn't say. {self._card(i, True)}"
                for i in items
            )
        elif not items and (instead := data.get("same_kind_instead")):
            options = "; ".join(f"{i['name']} ({i['sku']}) at {self._money(i['price'])}" for i in instead)
            text = (
                f'I couldn\'t find "{goal.slots.get("item", "that")}" in our inventory. '
                f"In stock of that kind ({goal.slots.get('category', 'the same kind')}): {options}."
            )
        elif not items:
            text = (
                f"I couldn't find \"{goal.slots.get('item', 'that')}\" in our inventory, so I can't say it's available."
            )
        elif len(items) == 1:
            text = self._card(items[0], full=True)
        else:
            rows = [
                f"- {i['name']} ({i['sku']}): "
                + (f"{i['stock']} in stock at {self._money(i['price'])}" if i["stock"] > 0 else "out of stock")
                for i in items
            ]
            text = "\n".join(["I found a few matches:", *rows])
        if len(items) == 1 or compared is not None:
            # What "it" means next (followups.py), and when it was said.
            plan.slots_patch |= {"answered_sku": (compared or (items[0],))[0]["sku"], "answered_turn": turn}
        plan.steps = [Respond(when="post", message=text)]
        return plan

    def _card(self, i: dict, full: bool = False) -> str:
        """Whether one item is in stock, at what price; with `full`, what it is known for."""
        if i["stock"] <= 0:
            out = f"Sorry, the {i['name']} ({i['sku']}) is out of stock right now."
            return out if full else "It's out of stock right now."
        price = self._money(i["price"])
        if not full:
            return f"It's in stock: {i['stock']} available at {price}."
        text = f"The {i['name']} ({i['sku']}) is in stock: {i['stock']} available at {price}."
        if features := i.get("attributes", {}).get(OPEN_ATTRIBUTE):
            text += f" Features: {features.replace('-', ' ').replace(' ', ', ')}."
        return text

    def _value(self, item: dict, name: str) -> str | None:
        value = item.get(name) if name in item else item.get("attributes", {}).get(name)
        if value in (None, ""):
            return None
        return self._money(float(value)) if name == "price" else str(value)

    def _compare(self, items: list[dict], name: str, order: str) -> tuple[dict, str]:
        """ "Which is lighter?": the item with the lowest (or highest) value, and the answer naming it
        with the others' values (the first item, when the listing gives no value to compare)."""
        raw = [(i, i[name] if name in i else i.get("attributes", {}).get(name)) for i in items]
        valued = [(i, n) for i, value in raw if (n := number(value)) is not None]
        unknown = [i for i in items if all(i is not j for j, _ in valued)]
        if not valued:
            names = ", ".join(f"the {i['name']} ({i['sku']})" for i in items)
            return items[0], f"I don't know the {name} of {names}: our listing doesn't say."
        pick = (min if order == "lowest" else max)(valued, key=lambda v: v[1])[0]
        others = "; ".join(f"{i['name']}: {self._value(i, name)}" for i, _ in valued if i is not pick)
        text = f"The {pick['name']} ({pick['sku']}) has the {order} {name}: {self._value(pick, name)}"
        text += f" ({others})." if others else "."
        if unknown:
            text += " Our listing doesn't give the " + name + " of " + ", ".join(i["name"] for i in unknown) + "."
        return pick, f"{text} {self._card(pick)}"

    def _about(self, item: dict, asked: list[dict]) -> str:
        """A yes, a no or an "I don't know" to a question about one item's attributes."""
        attributes = item.get("attributes", {})
        head = f"the {item['name']} ({item['sku']})"
        labels = [a["attribute"] for a in asked if a.get("value") is None]
        if labels and not any(a.get("value") for a in asked):
            label = labels[0]
            if label in attributes:
                return f"The {item['name']} ({item['sku']}): {label} {attributes[label]}. {self._card(item)}"
            return f'I don\'t know that: our listing has nothing under "{label}" for {head}. {self._card(item)}'
        values = list(dict.fromkeys(str(a["value"]) for a in asked if a.get("value")))
        lines = []
        for word in values:
            about = [a["attribute"] for a in asked if a.get("value") == word]
            has = [a for a in about if word in words(attributes.get(a, ""))]
            stated = [a for a in about if a in attributes and a != OPEN_ATTRIBUTE]
            if has:
                lines.append(f"Yes, {head} is {word} ({has[0]}: {_listed(attributes[has[0]])}).")
            elif stated:
                lines.append(f"No, {head} isn't {word} ({stated[0]}: {_listed(attributes[stated[0]])}).")
            else:
                lines.append(f"I don't know whether {head} is {word}: our listing doesn't say.")
        return " ".join([*lines, self._card(item)])


def number(value: object) -> float | None:
    """The leading number of a value ("59 g" -> 59), or None when it has none."""
    m = re.match(r"\s*(\d+(?:\.\d+)?)", str(value if value is not None else "").replace(",", ""))
    return float(m.group(1)) if m else None


def _listed(value: str) -> str:
    return ", ".join(words(value)) if " " in value.strip() else value


def _name_words(items: list[dict]) -> list[set[str]]:
    """Per item, the name words only that item has (a brand, a model number)."""
    names = [set(words(str(i.get("name", "")))) for i in items]
    return [{w for w in n if len(w) > 1 and sum(w in m for m in names) == 1} for n in names]


def _named(recent: list[dict], text: str) -> dict | None:
    """The recommended item the text names by a word the others do not share ("is the <brand> any good?")."""
    said = set(words(text))
    named = [i for i, distinct in zip(recent, _name_words(recent), strict=True) if distinct & said]
    return named[0] if len(named) == 1 else None


def _what(slots: dict[str, Any], brand: object) -> str:
    """What is looked for, as said back: feature, brand and kind ("wireless <brand> mouse")."""
    return " ".join(str(w) for w in (slots.get("feature"), brand, slots["category"]) if w)


def _product_words(text: str) -> str:
    """The words of a question that name a product ("is the alienware x17 in stock?" -> "alienware x17")."""
    named = [w for w in written(text) if w.lower() not in GENERIC_WORDS]
    return " ".join(named) or text


def _first(recent: list[dict], category: object) -> dict | None:
    """The top recommendation; of the category asked about, when one is named."""
    if category:
        # "that mouse" after recommending laptops points at nothing we recommended.
        same = [i for i in recent if str(i.get("category", "")).lower() == str(category).lower()]
        return same[0] if same else None
    return recent[0] if recent else None


def _only_reference(text: str, recent: list[dict]) -> bool:
    """True when the text names nothing beyond pointing back ("is it in stock?", "do you have that
    mouse?"): every word is a common word, a stock word or the kind of product just recommended."""
    kinds = {stem(w) for i in recent for w in words(str(i.get("category", "")))}
    rest = {stem(w) for w in words(text)} - {stem(w) for w in GENERIC_WORDS} - kinds
    return not any(len(w) > 1 for w in rest)


@planner("sales")
def sales_planner(needs: PlannerNeeds) -> Planner:
    return SalesPlanner(needs.store, needs.templates, needs.config.intents.vocabulary.thousands)
