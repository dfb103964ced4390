"""The word-vector scorer's arithmetic against the plain definition of its scores."""

from __future__ import annotations

import numpy as np
import pytest

from adapters.nlu import wordllama
from adapters.nlu.wordllama import WordLlamaScorer

EXAMPLES = [
    ("order_status", "where is my order"),
    ("order_status", "has my parcel shipped yet"),
    ("order_status", "track my package"),
    ("refund_request", "i want my money back"),
    ("refund_request", "please refund this purchase"),
    ("greeting", "hello there"),
]
MESSAGES = ["where is my parcel", "money back please", "hi", "zzzz qqqq", "refund refund refund"]
# More new tokens than `wordllama._FEW`: the rows they take are chosen by a partition.
LONG = (
    "please tell me where my parcel and the refund money went since last tuesday, and why nobody from "
    "your support team wrote back about the broken headphones"
)


def assert_scores_are_the_definition(scorer: WordLlamaScorer, text: str, top_k: int) -> None:
    """Each label's score is the mean of its top_k closest sentences' cosine similarities (to within
    the kept columns' 16-bit rounding: each token's column within 1/65,534 of its largest value)."""
    sims = scorer.similarities(text)
    expected = []
    for label in scorer.labels:
        mine = [s for (lb, _), s in zip(EXAMPLES, sims, strict=True) if lb == label]
        mine += [mine[0]] * (top_k - len(mine))  # fewer sentences than top_k: the first counts again
        expected.append(float(np.mean(sorted(mine, reverse=True)[:top_k])))
    assert scorer.scores(text) == pytest.approx(dict(zip(scorer.labels, expected, strict=True)), abs=2e-5)


@pytest.mark.parametrize("top_k", [1, 2, 3])
def test_scores_are_the_mean_of_each_labels_closest_sentences(top_k: int) -> None:
    scorer = WordLlamaScorer(dimensions=128, top_k=top_k)
    scorer.fit(EXAMPLES)
    for text in [*MESSAGES, LONG] * 2:  # the second time from the kept token columns
        assert_scores_are_the_definition(scorer, text, top_k)


def test_columns_given_up_for_new_tokens_leave_every_score_right(monkeypatch: pytest.MonkeyPatch) -> None:
    # A slab of six columns: the messages' tokens take more, so older columns are given up and
    # their rows reused; a message with more distinct tokens than that reads the whole bank.
    monkeypatch.setattr(wordllama, "COLUMNS", 6)
    scorer = WordLlamaScorer(dimensions=128, top_k=2)
    scorer.fit(EXAMPLES)
    for text in [*MESSAGES, LONG, *reversed(MESSAGES), LONG]:
        assert_scores_are_the_definition(scorer, text, 2)
        assert (scorer._row_of >= 0).sum() <= 6


def test_a_message_without_tokens_scores_zero() -> None:
    scorer = WordLlamaScorer()
    scorer.fit(EXAMPLES)
    assert set(scorer.scores("").values()) == {0.0}


def test_missing_model_files_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wordllama, "_WEIGHTS", "weights/not_shipped.safetensors")
    with pytest.raises(RuntimeError, match=r"model files of wordllama 0\.4: pip install 'wordllama"):
        WordLlamaScorer()
