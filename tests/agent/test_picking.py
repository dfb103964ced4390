"""Picking from what was offered: one reading of a reply, whatever the list (orders, items, requests)."""

from __future__ import annotations

import pytest

from agent.config.files import load_config
from agent.understanding.picking import Offered, chosen, pick, place_index
from tests.helpers import REPO

CHOOSING = load_config(REPO / "config").intents.vocabulary.choosing
ORDERS = [
    Offered(frozenset({"keyboard", "keychron"}), {"price": 89.0}),
    Offered(frozenset({"mouse", "logitech"}), {"price": 25.0}),
    Offered(frozenset({"headset", "sony"}), {"price": 120.0}),
]


@pytest.mark.parametrize(
    ("reply", "picked"),
    [
        ("the keyboard", [0]),
        ("the sony one please", [2]),
        ("the second one", [1]),
        ("#3", [2]),
        ("2", [1]),  # a bare number is a place
        ("the last one", [2]),
        ("the cheapest", [1]),
        ("the most expensive one", [2]),
        ("all of them", [0, 1, 2]),
        ("the keyboard and the mouse", [0, 1]),
        ("the fifth one", []),  # a place the list does not have picks nothing
        ("no idea", []),
    ],
)
def test_a_reply_picks_by_name_place_figure_or_all(reply: str, picked: list[int]) -> None:
    assert chosen(reply, ORDERS, CHOOSING) == picked


@pytest.mark.parametrize(
    ("reply", "picked"),
    [
        ("not the keyboard", [1, 2]),
        ("the one that isn't the keyboard or the mouse", [2]),
        ("not the second one", [0, 2]),
        ("definitely not the cheapest", [0, 2]),
        ("the one that hasn't got a mouse in it", [0, 2]),
        ("no, the keyboard", [0]),  # "no" answers what came before; it does not turn the pick around
        ("isn't the sony one the headset?", [2]),  # a question about the thing it names
    ],
)
def test_a_negation_before_the_pick_picks_the_others(reply: str, picked: list[int]) -> None:
    assert chosen(reply, ORDERS, CHOOSING) == picked


def test_a_number_inside_a_sentence_is_a_name_not_a_place() -> None:
    """ "the Rival 3" names a mouse; "3" alone would be the third."""
    items = [Offered(frozenset({"steelseries", "rival"})), Offered(frozenset({"logitech", "g305"}))]
    p = pick("do you have the SteelSeries Rival 3 in stock?", items, CHOOSING)
    assert (p.placed, p.named, p.strong) == (False, 0, True)


def test_a_figure_the_list_does_not_carry_is_still_said() -> None:
    """Items are ranked by their planner over their own data: the reply's figure and order are
    read even when the offered things carry no figures here."""
    items = [Offered(frozenset({"a"})), Offered(frozenset({"b"}))]
    p = pick("which is the lightest?", items, CHOOSING)
    assert p.ranked == ("weight", "lowest") and p.ranked_index is None and p.strong


def test_places_count_from_either_end() -> None:
    assert [place_index(p, 3) for p in (1, 3, 4, -1, -3, -4)] == [0, 2, None, 2, 0, None]


def test_a_plain_list_of_figure_words_means_the_price() -> None:
    """A project written before figures were named (`lowest: [cheaper]`) still loads."""
    from agent.config.schema import Choosing

    assert Choosing(lowest=["cheaper"]).lowest == {"cheaper": "price"}
