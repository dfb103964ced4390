"""The word-vector scorer's arithmetic against the plain definition of its scores."""

from __future__ import annotations

import numpy as np
import pytest

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


@pytest.mark.parametrize("top_k", [1, 2, 3])
def test_scores_are_the_mean_of_each_labels_closest_sentences(top_k: int) -> None:
    scorer = WordLlamaScorer(dimensions=128, top_k=top_k)
    scorer.fit(EXAMPLES)
    for text in MESSAGES * 2:  # the second time from the kept token columns
        sims = scorer.similarities(text)
        expected = []
        for label in scorer.labels:
            mine = [s for (lb, _), s in zip(EXAMPLES, sims, strict=True) if lb == label]
            mine += [mine[0]] * (top_k - len(mine))  # fewer sentences than top_k: the first counts again
            expected.append(float(np.mean(sorted(mine, reverse=True)[:top_k])))
        assert scorer.scores(text) == pytest.approx(dict(zip(scorer.labels, expected, strict=True)), abs=1e-6)


def test_a_message_without_tokens_scores_zero() -> None:
    scorer = WordLlamaScorer()
    scorer.fit(EXAMPLES)
    assert set(scorer.scores("").values()) == {0.0}
