"""Picking from what the bot offered: one vocabulary, one reading of a reply against a list.

The bot offers lists in three places: the orders a "which order?" question lists, the items a
recommendation listed, and the requests a clarifying question ('Did you mean ...?') names. A reply
picks from any of them the same ways: by name ('the keyboard', 'the <brand> one'), by place ('the
second', '#2', a bare '2', 'the last one'), by a figure ('the cheaper one', 'the lightest') or all of them
('both'). The words are config (intents.yaml vocabulary `choosing`); the list's own words and
figures come from what was offered. Each caller decides what a pick means for it (an order fills
the awaited slot; an item is asked about), never how the reply is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from agent.config.schema import Choosing
from agent.text import says, words

Order = Literal["lowest", "highest"]


@dataclass(frozen=True)
class Offered:
    """One thing offered, as a reply can pick it: the words that name it (its kind, brand, model
    words, a label's words) and its figures by field ('price': 1299.0, 'weight': 1.2)."""

    words: frozenset[str] = frozenset()
    figures: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Pick:
    """What a reply says about a list offered, each way it can pick.

    `place` is the index its place words name (within the list), `ranked` the field and the order
    of a figure word ('cheapest' -> ('price', 'lowest')) and `ranked_index` the item it picks,
    `named` the one thing the reply names by words no other offered thing has, `mentioned` every
    thing it names by words not all of them share ('the keyboard and the mouse'), `all` a word for
    all of them ('both')."""

    all: bool = False
    place: int | None = None
    placed: bool = False  # a place word was said, whether or not the list has that place
    ranked: tuple[str, Order] | None = None
    ranked_index: int | None = None
    named: int | None = None
    mentioned: tuple[int, ...] = ()
    negated: bool = False  # a negation comes before what it names: it picks the others

    @property
    def strong(self) -> bool:
        """It points at one offered thing by place, figure or name (not only 'it', 'that one')."""
        return self.placed or self.ranked is not None or self.named is not None


def place_index(place: int, length: int) -> int | None:
    """The index of a place in a list of `length` (1 is the first, -1 the last), or None past its ends."""
    index = place - 1 if place > 0 else length + place
    return index if 0 <= index < length else None


def pick(text: str, offered: Sequence[Offered], choosing: Choosing) -> Pick:
    """How the reply `text` picks from `offered`, read once with the vocabulary `choosing`."""
    if not offered:
        return Pick()
    said_words = words(text)
    said = set(said_words)
    every = [set(o.words) for o in offered]
    shared = set.intersection(*every) if len(every) > 1 else set()  # one alone is named by any of its words
    mentioned = tuple(n for n, w in enumerate(every) if said & (w - shared))
    distinct = [n for n, w in enumerate(every) if said & {x for x in w if sum(x in v for v in every) == 1}]
    place: int | None = None
    placed = False
    if found := says(text, choosing.ordinals):
        placed, place = True, place_index(choosing.ordinals[found[0]], len(offered))
    elif len(said_words) == 1 and said_words[0].isdigit():
        # A bare number ('2') is a place; inside a sentence it is more often a name ('Rival 3').
        placed, place = True, place_index(int(said_words[0]), len(offered))
    ranked: tuple[str, Order] | None = None
    ranked_index: int | None = None
    for order, vocabulary in (("lowest", choosing.lowest), ("highest", choosing.highest)):
        if ranked is None and (found := says(text, vocabulary)):
            figure = vocabulary[found[0]]
            ranked = (figure, order)  # type: ignore[assignment]
            ranked_index = _by_figure(offered, figure, order)  # type: ignore[arg-type]
    return Pick(
        negated=_negated(text, said_words, every, choosing),
        all=bool(says(text, choosing.all)),
        place=place,
        placed=placed,
        ranked=ranked,
        ranked_index=ranked_index,
        named=distinct[0] if len(distinct) == 1 else None,
        mentioned=mentioned,
    )


def _negated(text: str, said_words: list[str], every: list[set[str]], choosing: Choosing) -> bool:
    """A negation comes before the first word that picks ("not the delivered one", "the one that
    hasn't arrived", "not the second"), so the reply picks what that word does not. A question
    that opens with one ("isn't the first one wireless?") asks about the thing it names."""
    picking = set().union(*every) | set(choosing.ordinals) | set(choosing.lowest) | set(choosing.highest)
    first = next((n for n, w in enumerate(said_words) if w in picking), None)
    if not first:
        return False
    before = f" {' '.join(said_words[:first])} "
    negations = [f" {' '.join(words(n))} " for n in choosing.negations]
    if text.rstrip().endswith("?") and any(f" {said_words[0]} " == n for n in negations):
        return False
    return any(n in before for n in negations)


def _by_figure(offered: Sequence[Offered], figure: str, order: Order) -> int | None:
    """The offered thing with the lowest or highest value of `figure`, the first on a tie; None
    when none of them has it."""
    having = [n for n, o in enumerate(offered) if figure in o.figures]
    if not having:
        return None
    value = min if order == "lowest" else max
    return value(having, key=lambda n: offered[n].figures[figure])


def chosen(text: str, offered: Sequence[Offered], choosing: Choosing) -> list[int]:
    """The offered things a reply to "which one?" chooses, by index: all of them ('both'), the one
    it names, the one at the place it says, the one a figure word ranks first ('the cheaper
    one'), else the ones it names if it names fewer than all; none if it picks none. Said with a
    negation before it ("not the delivered one"), the others."""
    p = pick(text, offered, choosing)
    if p.all:
        return list(range(len(offered)))
    if len(p.mentioned) == 1:
        picked = list(p.mentioned)
    elif p.placed:
        picked = [p.place] if p.place is not None else []
    elif p.ranked_index is not None:
        picked = [p.ranked_index]
    else:
        picked = list(p.mentioned) if len(p.mentioned) < len(offered) else []
    if p.negated and picked:  # "not the delivered one": the others
        return [n for n in range(len(offered)) if n not in picked]
    return picked
