"""Scorers read as one: each label's score is the mean of the scorers' own, as a read-only mapping."""

from __future__ import annotations

import pytest

from adapters.nlu.averaged import AveragedScorer
from adapters.nlu.lexical import LexicalScorer
from adapters.nlu.wordllama import WordLlamaScorer
from agent.understanding.scores import LabelScores
from tests.helpers import rules_classifier

EXAMPLES = [
    ("order_status", "track my package"),
    ("order_status", "when does my parcel arrive"),
    ("refund_request", "refund me please"),
    ("refund_request", "i would like my money returned"),
    ("greeting", "hi"),
    ("greeting", "hey, good evening"),
]


class _ByDictionary:
    """A scorer with no label order of its own: its scores come as a dictionary."""

    def __init__(self, scorer: WordLlamaScorer):
        self.scorer = scorer

    def fit(self, examples: list[tuple[str, str]]) -> None:
        self.scorer.fit(examples)

    def scores(self, text: str) -> dict[str, float]:
        return self.scorer.scores(text)

    def words(self) -> set[str]:
        return set()


@pytest.mark.parametrize("text", ["where is my parcel", "money back please", "hi", ""])
def test_each_score_is_the_mean_of_the_scorers_and_reads_as_a_mapping(text: str) -> None:
    words, lexical = WordLlamaScorer(), LexicalScorer(cache=None)
    averaged = AveragedScorer([words, lexical])
    averaged.fit(EXAMPLES)
    scores = averaged.scores(text)
    assert isinstance(scores, LabelScores)
    a, b = words.scores(text), lexical.scores(text)
    assert dict(scores) == {label: 0.0 + a[label] / 2 + b[label] / 2 for label in a}
    assert list(scores) == sorted(a) and len(scores) == 3
    assert scores.get("no_such_label") is None and "greeting" in scores
    with pytest.raises(TypeError):
        scores["greeting"] = 1.0  # type: ignore[index]


def test_scorers_without_a_label_order_are_averaged_as_dictionaries() -> None:
    averaged = AveragedScorer([_ByDictionary(WordLlamaScorer()), LexicalScorer(cache=None)])  # type: ignore[list-item]
    averaged.fit(EXAMPLES)
    scores = averaged.scores("where is my parcel")
    assert type(scores) is dict
    assert max(scores, key=scores.__getitem__) == "order_status"
    assert LabelScores.of(scores) == scores


@pytest.mark.parametrize(
    "text", ["where is O-12345?", "thanks, bye", "my mouse double clicks", "what's the capital of peru", "yes"]
)
def test_a_reading_from_a_dictionary_is_the_reading_from_the_label_order(text: str) -> None:
    reader = rules_classifier().reader
    entities, core = reader._understood(text)
    in_order = reader.fused(core.lower())
    as_dictionary = LabelScores.of(dict(in_order))
    assert as_dictionary.order is not in_order.order
    assert reader.decide(as_dictionary, entities) == reader.decide(in_order, entities)
