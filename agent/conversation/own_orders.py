"""The customer's own things: an order named by what was bought, its brand or its kind.

"the laptop", "my order from that brand", "has my keyboard arrived yet?" name an order without its ID.
The words that name an order come from the store's data (each product's name and kind, the kind
words of config/intents.yaml's lookup slots), never from this module; the orders come from the
customer's own record (`DataSource.orders_of`). One match is used, several are offered as a choice
("Which one: ...?") whose reply ("the one by that brand", "the second one", "the cheaper one", "both of
them") resolves against the list, and none is said so, with nothing done. A request that names an
item takes no order remembered from earlier in the conversation: "my money back for the keyboard"
after asking about a mouse's order refunds the keyboard's order or nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent.config.schema import Choosing, IntentSpec, Messages, SlotSpec
from agent.context.turn import TurnContext
from agent.conversation.moves import Request, Several, SlotAnswer
from agent.conversation.session import Choice, Goal
from agent.domain.types import Classification, Intent
from agent.sources import DataSource
from agent.templates import render
from agent.text import STOPWORDS, words
from agent.understanding.levels import ANSWERED
from agent.understanding.picking import Offered, chosen
from agent.understanding.rules import Said


def _forms(word: str) -> set[str]:
    """A kind word as people write it: "mouse", "mouses", "laptops", "headsets"."""
    return {word, f"{word}s", f"{word}es"}


@dataclass(frozen=True)
class Named:
    """What a message said about the customer's orders.

    `said` is False when the message names no item, brand or kind the store knows (then nothing is
    resolved and the request stands as it is); otherwise `orders` are the customer's orders it fits:
    one, several (the bot asks which) or none (the bot says so and does nothing)."""

    said: bool
    orders: list[dict[str, Any]]
    words: list[str]  # the store's words the message used (a kind, a brand)


class OrderNames:
    """Which of a customer's orders a message names by its items.

    Args:
        kinds: each product name of the store's data with its kind (a model name -> its kind).
        aliases: other words for a kind from the store's lookup slots ("headphones" -> "headset").
        choosing: the words that pick from a list by place, by price or all of it (config
            intents.yaml vocabulary `choosing`).
    """

    def __init__(self, kinds: Mapping[str, str], aliases: Mapping[str, str], choosing: Choosing):
        self.kind_of = {name.lower(): kind.lower() for name, kind in kinds.items()}
        self.kind_words: dict[str, str] = {}  # a word -> the kind it names
        for kind in set(self.kind_of.values()):
            for form in _forms(kind):
                self.kind_words[form] = kind
        for alias, kind in aliases.items():
            if kind.lower() in self.kind_words.values():
                for form in _forms(alias.lower()):
                    self.kind_words.setdefault(form, kind.lower())
        # Brands: a product name's first word (its brand), as people name an order by its maker.
        self.brands = {n.split()[0] for n in self.kind_of if n.split()}
        self.choosing = choosing

    def item_words(self, order: dict[str, Any]) -> set[str]:
        """The words that name one order: its items' kinds, brands and distinctive name words."""
        found: set[str] = set()
        for item in order.get("items") or []:
            name = str(item.get("name", "") if isinstance(item, dict) else item).lower()
            kind = self.kind_of.get(name) or next((k for n, k in self.kind_of.items() if n in name), None)
            if kind:
                found |= {w for w, k in self.kind_words.items() if k == kind}
            found |= {w for w in words(name) if (len(w) >= 3 or any(c.isdigit() for c in w)) and w not in STOPWORDS}
        return found

    def choice_words(self, order: dict[str, Any]) -> set[str]:
        """The words a reply to "which one?" picks an order by: its items' and its state's ("the
        one that arrived")."""
        return self.item_words(order) | set(self.choosing.states.get(str(order.get("status", "")), []))

    def store_words(self, text: str) -> list[str]:
        """The words of the message that name something the store sells: a kind, a brand."""
        return [w for w in words(text) if w in self.kind_words or w in self.brands]

    def named(self, text: str, orders: list[dict[str, Any]]) -> Named:
        """The customer's orders the message names by item, brand or kind."""
        said_words = set(words(text))
        per_order = [(o, said_words & self.item_words(o)) for o in orders]
        said = self.store_words(text)
        if not said and not any(hits for _, hits in per_order):
            return Named(False, [], [])
        best = max((len(hits) for _, hits in per_order), default=0)
        found = [o for o, hits in per_order if best and len(hits) == best]
        return Named(True, found, said or sorted({w for _, hits in per_order for w in hits}))

    def chosen(self, text: str, choices: list[Choice]) -> list[Choice]:
        """The choices a reply picks from the list just offered: by name ("the one by that brand"), by place
        ("the second one"), by price ("the cheaper one") or all of them ("both"); none if it picks none."""
        return [choices[n] for n in chosen(text, [offered(c) for c in choices], self.choosing)]


def offered(choice: Choice) -> Offered:
    """A choice as a reply picks it: by its words, or by its amount ("the cheaper one", "the smaller order")."""
    return Offered(frozenset(choice.words), {"price": choice.amount, "amount": choice.amount})


def choice_of(order: dict[str, Any], words: set[str]) -> Choice:
    """One order as a choice: its ID, what it holds and its amount."""
    items = [str(i.get("name", "") if isinstance(i, dict) else i) for i in order.get("items") or []]
    return Choice(
        value=str(order.get("order_id", "")),
        label=", ".join(i for i in items if i) or str(order.get("order_id", "")),
        amount=float(order.get("amount") or 0),
        words=sorted(words),
    )


def which(choices: list[Choice], question: str, joiner: str) -> str:
    """ "Which one: the <item> (O-12345) or the <item> (O-24680)?" """
    named = [f"the {ch.label} ({ch.value})" for ch in choices]
    listed = ", ".join(named[:-1]) + f" {joiner} {named[-1]}" if len(named) > 1 else named[0]
    return render(question, {"choices": listed})


@dataclass(frozen=True)
class Owned:
    """A request after its order was looked up among the customer's own.

    `cls` carries the order when one was found; `named` says the request named an item (so it takes
    no order remembered from before); `choices` are the orders to ask between; `nothing` is what to
    say when the item named is on none of the customer's orders (and nothing is done)."""

    cls: Classification
    named: bool = False
    choices: list[Choice] = field(default_factory=list)
    nothing: str | None = None


class OwnOrders:
    """Resolves an order named by its items against the customer's own orders.

    Args:
        names: which orders a message names.
        slots: the slots; the `owned` one takes an order ID.
        specs: the intents; `own_orders` says which of the customer's orders one means by default.
        data: the customer's orders (`DataSource.orders_of`).
        messages: the question that offers a choice and the answer when nothing matches.
    """

    def __init__(
        self,
        names: OrderNames,
        slots: Mapping[str, SlotSpec],
        specs: Mapping[str, IntentSpec],
        data: DataSource,
        messages: Messages,
    ):
        self.names = names
        self.specs = specs
        self.owned = {name for name, spec in slots.items() if spec.owned}
        self.data = data
        self.messages = messages

    def _slot(self, required: Iterable[str]) -> str | None:
        return next((p for p in required if p in self.owned), None)

    async def _orders(self, ctx: TurnContext) -> list[dict[str, Any]]:
        customer = ctx.state.customer_id
        # Through the attempt's reads, so the policy check and the tool see the orders offered here.
        return await (ctx.reads or self.data).orders_of(customer) if customer else []

    async def resolve(self, ctx: TurnContext, cls: Classification, intent: Intent) -> Owned:
        """The request with its order, when it names one by its items or means the customer's one
        order in a status (`own_orders`); or the choice to offer, or what to say when none fits."""
        slot = self._slot(intent.required_params)
        if slot is None or cls.params.get(slot) not in (None, "") or not ctx.state.customer_id:
            return Owned(cls)
        orders = await self._orders(ctx)
        named = self.names.named(ctx.interaction.text, orders)
        if named.said:
            if not named.orders:
                what = " or ".join(_with_article(w) for w in dict.fromkeys(named.words))
                return Owned(cls, named=True, nothing=render(self.messages.no_such_order, {"what": what}))
            return self._found(cls, slot, named.orders, named=True)
        spec = self.specs.get(intent.id)
        statuses = set(spec.own_orders) if spec is not None else set()
        if statuses and not cls.fills_slot:
            meant = [o for o in orders if str(o.get("status", "")) in statuses]
            if meant:
                return self._found(cls, slot, meant, named=False)
        return Owned(cls)

    def _found(self, cls: Classification, slot: str, orders: list[dict[str, Any]], named: bool) -> Owned:
        if len(orders) == 1:
            params = cls.params | {slot: str(orders[0].get("order_id", ""))}
            return Owned(cls.model_copy(update={"params": params}), named=named)
        choices = [choice_of(o, self.names.choice_words(o)) for o in orders]
        return Owned(cls, named=named, choices=choices)

    def offer(self, goal: Goal, owned: Owned) -> None:
        """Make the goal's open question the choice between the orders found."""
        if owned.choices and goal.missing and goal.missing[0] in self.owned:
            goal.choices = owned.choices
            goal.next_question = which(owned.choices, self.messages.which_order, self.messages.which_or)
        elif not goal.missing or goal.missing[0] not in self.owned:
            goal.choices = []

    async def answer(self, ctx: TurnContext, said: Said) -> SlotAnswer | Request | Several | None:
        """A reply to "which order?" that picks one of the orders offered ("the second one", "the
        brand's one") or names one by its items ("the keyboard"); None when it does neither, or
        plainly asks something else."""
        goal = ctx.me.active_goal
        if goal is None or not goal.missing or goal.missing[0] not in self.owned or not ctx.state.customer_id:
            return None
        if said.intent_id not in (None, goal.intent_id) and said.sure:
            return None  # "recommend me a keyboard" is a request of its own
        text = ctx.interaction.text
        picked = self.names.chosen(text, goal.choices)
        slot = goal.missing[0]
        if len(picked) == 1:
            params = {slot: picked[0].value}
            return SlotAnswer(
                Classification(intent_id=goal.intent_id, params=params, confidence=ANSWERED, fills_slot=True)
            )
        if len(picked) > 1:
            # "both of them": the first answers the question, each other one is a request of its own,
            # queued behind it (each asks for its own yes when its turn comes).
            first, *rest = picked
            answer = Classification(
                intent_id=goal.intent_id, params={slot: first.value}, confidence=ANSWERED, fills_slot=True
            )
            more = [Classification(intent_id=goal.intent_id, params={slot: c.value}, confidence=ANSWERED) for c in rest]
            return Several([answer, *more])
        if self.names.named(text, await self._orders(ctx)).said:
            # Named by its items: looked up when the request is acted on (`resolve`), as a new one would be.
            return Request(Classification(intent_id=goal.intent_id, confidence=ANSWERED))
        return None


def _with_article(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"
