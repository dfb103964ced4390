"""The offline classifier on ordinary phrasings: case, punctuation, filler, lower-case IDs."""

from __future__ import annotations

import random
import re
import string

import pytest

from agent.config.files import load_config
from agent.config.intents import IntentsRegistry
from agent.conversation.session import Speaker
from agent.domain.types import IntentContext
from agent.text import Normalizer, Runs, stem
from tests.helpers import REPO, interaction, rules_classifier
from tests.helpers import classify as understood

CONFIG = load_config(REPO / "config")
CLASSIFIER = rules_classifier()
INTENTS = IntentsRegistry(CONFIG).get_eligible(IntentContext(channel="console"))


async def classify(text: str, me: Speaker | None = None):
    return await understood(CLASSIFIER, CLASSIFIER, interaction(text), INTENTS, me=me)


@pytest.mark.parametrize(
    ("text", "intent", "order_id"),
    [
        ("Where's my order O-12345?", "order_status", "O-12345"),
        ("where is my package", "order_status", None),
        ("track o-12345", "order_status", "O-12345"),
        ("TRACK O12345!!!", "order_status", "O-12345"),
        ("status of my order o 12345 pls", "order_status", "O-12345"),
        ("uh hi, when will order #23456 arrive?", "order_status", "O-23456"),
        ("has my parcel shipped yet?", "order_status", None),
        ("Is my delivery running late", "order_status", None),
        ("o_45678", "order_status", "O-45678"),
        ("I need to talk to a human", "human_handoff", None),
        ("get me a REAL person!", "human_handoff", None),
        ("can i speak to a representative", "human_handoff", None),
        ("please open a support ticket", "create_ticket", None),
        ("the zipper on my jacket is broken", "create_ticket", None),
        ("tell me a joke", None, None),
        ("what's the weather in Paris", None, None),
    ],
)
async def test_phrasings(text: str, intent: str | None, order_id: str | None) -> None:
    cls = await classify(text)
    assert cls.intent_id == intent
    assert cls.params.get("order_id") == order_id


def test_stemming_folds_inflections() -> None:
    assert stem("tracking") == stem("tracked") == stem("tracks") == "track"
    assert stem("arrives") == stem("arrive") == stem("arrived")
    assert stem("shipped") == stem("shipping") == "ship"


def test_normalizer_drops_filler_and_folds_synonyms() -> None:
    norm = Normalizer({"parcel": "order"}, ["um"])
    assert norm.tokens("Um, where's my PARCEL?!") == [stem("where"), "order"]


@pytest.mark.parametrize(
    ("character_class", "shortest", "pattern"),
    [
        (r"\w", 1, r"\w+"),
        (r"\w", 2, r"\w\w+"),
        ("[A-Za-z]", 4, r"[A-Za-z]{4,}"),
        ("[a-z0-9]", 1, r"[a-z0-9]+"),
        ("[a-z']", 1, r"[a-z']+"),
    ],
)
def test_runs_are_what_the_regular_expression_finds(character_class: str, shortest: int, pattern: str) -> None:
    runs = Runs(character_class, shortest)
    rng = random.Random(7)
    # Letters, digits, the underscore, punctuation, every kind of ASCII space and control character.
    alphabet = string.ascii_letters + string.digits + "_'-.,!? \t\n\r\x0b\x0c\x1c\x1f\x00"
    texts = ["".join(rng.choices(alphabet, k=rng.randint(0, 40))) for _ in range(2000)]
    texts += ["", "a", "ab", "where's O-12345? it_is late", "café au lait", "naïve user's ﬁle", "über 4 straße"]
    for text in texts:
        assert runs(text) == re.findall(pattern, text), text


async def test_yes_without_anything_pending_is_not_an_intent() -> None:
    assert (await classify("yes")).intent_id is None
