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

from agent.config.schema import ANY, SalesWording
from agent.context.log import TurnLog
from agent.conversation.session import Goal, GoalStatus, Speaker
from agent.domain.catalog import StoreSettings
from agent.domain.contexts import AgentRequest
from agent.domain.types import AskUser, Plan, Respond, ToolCall
from agent.planners.base import Planner
from agent.planners.budget_words import parse_budget
from agent.planners.registry import PlannerNeeds, planner
from agent.templates import money, render
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
        wording: what it says (`messages.sales` in intents.yaml).
        thousands: the words that make a budget's number thousands ("35k"; vocabulary `thousands`).
    """

    reads_preferences = True  # disliked brands and budgets shape its recommendations

    def __init__(self, store: StoreSettings, questions: Planner, wording: SalesWording, thousands: Sequence[str] = ()):
        self.store = store
        self.questions = questions
        self.wording = wording
        self.thousands = thousands
        self._attribute_words = phrase_finder(store.inventory.attribute_words)

    def question(self, intent_id: str, slot: str) -> str:
        return self.questions.question(intent_id, slot)

    def _money(self, value: float) -> str:
        return money(value, self.store.currency)

    def _say(self, template: str, values: dict[str, Any]) -> str:
        return render(template, values, self.store.currency)

    def _within(self, plain: str, within: str, ceiling: float | None, values: dict[str, Any]) -> str:
        """The wording for a search without a budget, or the one that also says the budget."""
        return self._say(plain, values) if ceiling is None else self._say(within, values | {"budget": ceiling})

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
                question = self.question(r.intent.id, "budget")
                prompt = self._say(self.wording.unread_budget, {"question": question})
                plan.steps = [AskUser(param="budget", prompt=prompt)]
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
            plan.steps = [Respond(when="error", message=self.wording.inventory_down)]
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
        w, what = self.wording, _what(slots, brand)
        plan.steps = [
            Respond(when="pre", message=self._within(w.looking, w.looking_within, ceiling, {"what": what})),
            ToolCall(tool_name=r.intent.tool or "", params={k: v for k, v in params.items() if v not in (None, [])}),
        ]
        return plan

    @staticmethod
    def _ceiling(slots: dict[str, Any]) -> float | None:
        """The most the customer will pay; None when they said the price sets no limit."""
        return None if slots["budget"] == ANY else float(slots["budget"])

    def _phrase(self, data: dict[str, Any], slots: dict[str, Any], r: AgentRequest) -> tuple[str, list[dict]]:
        w, items, ceiling = self.wording, data.get("items", []), self._ceiling(slots)
        what = _what(slots, slots.get("brand"))
        brief = bool(r.preferences and r.preferences.communication_style == "brief")
        lines = []
        if data.get("excluded_brands"):
            lines.append(self._say(w.avoided, {"brands": ", ".join(data["excluded_brands"])}))
        if not items:
            alternatives = data.get("alternatives_over_budget", [])
            others = data.get("alternatives_without_features", [])
            if alternatives:
                options = "; ".join(self._say(w.closest, a) for a in alternatives)
                values = {"what": what, "budget": ceiling, "options": options}
                lines.insert(0, self._say(w.none_over_budget, values))
            elif others:
                options = "; ".join(self._say(w.closest, a) for a in others)
                category = str(slots["category"])
                kind = self._say(w.kind_without, {"category": category}) if slots.get("feature") else category
                values = {"what": what, "kind": kind, "options": options}
                lines.insert(0, self._within(w.none_without_feature, w.none_without_feature_within, ceiling, values))
            else:
                lines.insert(0, self._within(w.none, w.none_within, ceiling, {"what": what}))
            lines.append(w.other_brand if ceiling is None else w.other_budget_or_brand)
            return " ".join(lines), []
        if len(items) == 1:
            head = self._within(w.one_option, w.one_option_within, ceiling, {"what": what})
        else:
            head = self._within(w.options, w.options_within, ceiling, {"what": what, "count": len(items)})
        rows = []
        for n, i in enumerate(items, start=1):
            extra = i.get("attributes", {}).get("features")
            if extra and not brief:
                rows.append(self._say(w.option_features, i | {"n": n, "features": extra.replace("-", " ")}))
            else:
                rows.append(self._say(w.option, i | {"n": n}))
        # What a follow-up compares the options by ("which is lighter?") comes with them.
        keep = ("sku", "name", "category", "price", "stock", "attributes")
        recommended = [{k: i[k] for k in keep if k in i} for i in items]
        return "\n".join([head, *rows, *lines, w.options_next]), recommended

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
            if len(skus) == 1:
                checking = self._say(self.wording.checking_listed, {"item": names.get(skus[0], skus[0])})
            else:
                checking = self._say(self.wording.checking_listed_many, {"count": len(skus)})
            plan.steps = [
                Respond(when="pre", message=checking),
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
            Respond(when="pre", message=self._say(self.wording.checking, {"item": label})),
            ToolCall(tool_name=r.intent.tool or "", params=params),
        ]
        return plan

    def _stock_answer(self, plan: Plan, goal: Goal, data: dict | None, turn: int) -> Plan:
        w = self.wording
        plan.goal_status = "done"
        if data is None:
            plan.steps = [Respond(when="error", message=w.inventory_down)]
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
            text = "\n".join(f"{self._say(w.not_listed, i)} {self._card(i, full=True)}" for i in items)
        elif not items and (instead := data.get("same_kind_instead")):
            options = "; ".join(self._say(w.instead, i) for i in instead)
            values = {"item": goal.slots.get("item") or w.unnamed_item, "category": goal.slots.get("category")}
            text = self._say(w.not_found_instead, values | {"options": options})
        elif not items:
            text = self._say(w.not_found, {"item": goal.slots.get("item") or w.unnamed_item})
        elif len(items) == 1:
            text = self._card(items[0], full=True)
        else:
            rows = [self._say(w.match if i["stock"] > 0 else w.match_out_of_stock, i) for i in items]
            text = "\n".join([w.matches, *rows])
        if len(items) == 1 or compared is not None:
            # What "it" means next (followups.py), and when it was said.
            plan.slots_patch |= {"answered_sku": (compared or (items[0],))[0]["sku"], "answered_turn": turn}
        plan.steps = [Respond(when="post", message=text)]
        return plan

    def _card(self, i: dict, full: bool = False) -> str:
        """Whether one item is in stock, at what price; with `full`, what it is known for."""
        w = self.wording
        if i["stock"] <= 0:
            return self._say(w.out_of_stock, i) if full else w.it_out_of_stock
        if not full:
            return self._say(w.it_in_stock, i)
        if features := i.get("attributes", {}).get(OPEN_ATTRIBUTE):
            return self._say(w.in_stock_features, i | {"features": features.replace("-", " ").replace(" ", ", ")})
        return self._say(w.in_stock, i)

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
        w = self.wording
        if not valued:
            named = ", ".join(self._say(w.named_item, i) for i in items)
            return items[0], self._say(w.ranked_unknown, {"attribute": name, "items": named})
        pick = (min if order == "lowest" else max)(valued, key=lambda v: v[1])[0]
        others = "; ".join(f"{i['name']}: {self._value(i, name)}" for i, _ in valued if i is not pick)
        values = pick | {"order": order, "attribute": name, "value": self._value(pick, name), "others": others}
        sentences = [self._say(w.ranked_others if others else w.ranked, values)]
        if unknown:
            names = ", ".join(i["name"] for i in unknown)
            sentences.append(self._say(w.ranked_unlisted, {"attribute": name, "names": names}))
        return pick, " ".join([*sentences, self._card(pick)])

    def _about(self, item: dict, asked: list[dict]) -> str:
        """A yes, a no or an "I don't know" to a question about one item's attributes."""
        w, attributes = self.wording, item.get("attributes", {})
        labels = [a["attribute"] for a in asked if a.get("value") is None]
        if labels and not any(a.get("value") for a in asked):
            label = labels[0]
            if label in attributes:
                answer = self._say(w.attribute, item | {"attribute": label, "value": attributes[label]})
            else:
                answer = self._say(w.no_attribute, item | {"attribute": label})
            return f"{answer} {self._card(item)}"
        lines = []
        for word in dict.fromkeys(str(a["value"]) for a in asked if a.get("value")):
            about = [a["attribute"] for a in asked if a.get("value") == word]
            has = [a for a in about if word in words(attributes.get(a, ""))]
            stated = [a for a in about if a in attributes and a != OPEN_ATTRIBUTE]
            if has:
                values = {"word": word, "attribute": has[0], "value": _listed(attributes[has[0]])}
                lines.append(self._say(w.has_value, item | values))
            elif stated:
                values = {"word": word, "attribute": stated[0], "value": _listed(attributes[stated[0]])}
                lines.append(self._say(w.lacks_value, item | values))
            else:
                lines.append(self._say(w.unknown_value, item | {"word": word}))
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
    intents = needs.config.intents
    return SalesPlanner(needs.store, needs.templates, intents.messages.sales, intents.vocabulary.thousands)
