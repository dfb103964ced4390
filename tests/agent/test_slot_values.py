"""Slot values named in a message (config `values` and `aliases`): found in any case and plural, and
the quick check that skips a message naming none never skips one that does."""

from __future__ import annotations

import pytest

from agent.config.files import load_config
from agent.config.intents import IntentsRegistry
from agent.understanding.slots import SlotExtractor, TextFacts
from tests.helpers import REPO

SLOTS = SlotExtractor(IntentsRegistry(load_config(REPO / "config")).slots)
VALUE_SLOTS = ("category", "brand", "feature", "device")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Any SONY Earbuds that are wireless?",
            {"category": "headset", "brand": "Sony", "feature": "wireless", "device": "headset"},
        ),
        ("my web cam froze", {"category": "webcam", "device": "webcam"}),
        # Not ASCII: a long s is an "s" to a case-insensitive pattern, and the lowercase keeps it long.
        ("a wirele\u017fs monitor from BenQ", {"category": "monitor", "brand": "BenQ", "feature": "wireless"}),
        ("where is my parcel", {}),
    ],
)
def test_values_are_found_in_any_case_plural_and_alias(text: str, expected: dict[str, str]) -> None:
    found, _ = SLOTS.extract(text)
    assert {k: v for k, v in found.items() if k in VALUE_SLOTS and k in expected} == expected
    assert not {k for k in found if k in VALUE_SLOTS} - set(expected) - {"device"}


@pytest.mark.parametrize(
    "text",
    [
        "LAPTOPS for gaming",
        "Office Chairs?",
        "corsair keyboard",
        "earphones",
        "a headset from JBL, 144Hz",
        "nothing here at all",
        "straße mouse",
        "wirele\u017fs",
        "plenty of space on my pc",  # "pc" inside a word is not the value
        "a desk-chair and a DESK CHAIR",
        "mousees? keyboards!",
        "the officer's laptop_bag",
    ],
)
def test_the_quick_check_finds_what_the_pattern_finds(text: str) -> None:
    # The check reads the text's words: a value's first word, or a one-word value with "s" or "es".
    for name in VALUE_SLOTS:
        m = SLOTS._values[name].search(text)
        named = {k.casefold(): v for k, v in SLOTS._canonical[name].items()}.get(m.group(1).casefold()) if m else None
        assert SLOTS.lookup(name, text) == named
        assert SLOTS.lookup(name, text, TextFacts(text)) == named
