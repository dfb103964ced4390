"""The lexical model's scores, computed without scikit-learn, against scikit-learn's own reading."""

from __future__ import annotations

import numpy as np
import pytest

from adapters.nlu.lexical import LexicalScorer

EXAMPLES = [
    ("order_status", "where is my order"),
    ("order_status", "has my parcel shipped yet"),
    ("refund_request", "i want my money back"),
    ("refund_request", "please refund this purchase refund"),
    ("greeting", "hello there"),
    ("greeting", "good morning"),
]


@pytest.mark.parametrize(
    "text",
    ["where is my parcel", "Money back, money back please", "refund refund refund my order order", "hello", "zzzz", ""],
)
def test_scores_are_scikit_learns_probabilities(text: str) -> None:
    scorer = LexicalScorer(cache=None)
    vectorizer, model = scorer._fitted(EXAMPLES)
    scorer.fit(EXAMPLES)
    expected = model.predict_proba(vectorizer.transform([text]))[0]
    assert scorer.labels == [str(c) for c in model.classes_]
    assert list(scorer.scores(text).values()) == pytest.approx(expected, rel=1e-5, abs=1e-6)
    indices, values = scorer._features(text)
    row = vectorizer.transform([text]).toarray()[0]
    assert dict(zip(indices.tolist(), values.tolist(), strict=True)) == pytest.approx(
        {int(n): float(row[n]) for n in np.flatnonzero(row)}, rel=1e-6
    )


@pytest.mark.parametrize("seed", range(8))
def test_scores_of_random_banks_and_messages_are_scikit_learns_probabilities(seed: int) -> None:
    # Random sentences over a small vocabulary, so that messages repeat words and word pairs and
    # hold some the banks never saw.
    rng = np.random.default_rng(seed)
    words = [f"w{n}" for n in range(40)]

    def sentence(length: int) -> str:
        return " ".join(rng.choice(words, length))

    examples = [(f"label-{n % 5}", sentence(int(rng.integers(2, 9)))) for n in range(60)]
    scorer = LexicalScorer(cache=None, seed=seed)
    vectorizer, model = scorer._fitted(examples)
    scorer.fit(examples)
    for _ in range(20):
        text = sentence(int(rng.integers(0, 25)))
        expected = model.predict_proba(vectorizer.transform([text]))[0]
        assert list(scorer.scores(text).values()) == pytest.approx(expected, rel=1e-5, abs=1e-6)


def test_an_added_sentence_reads_as_its_label_and_moves_only_messages_sharing_its_words() -> None:
    scorer = LexicalScorer(cache=None)
    scorer.fit(EXAMPLES)
    far = ["good morning", "has my parcel shipped yet"]
    before = {text: scorer.scores(text) for text in far}
    weights = np.array(scorer._weights, copy=True)
    sentence = "the blender grinds and smokes"  # no word of it in the banks
    assert max(scorer.scores(sentence), key=scorer.scores(sentence).get) != "refund_request"
    scorer.add([("refund_request", sentence)])
    read = scorer.scores(sentence)
    assert max(read, key=read.get) == "refund_request"
    assert scorer.scores("my blender grinds") != pytest.approx(before["good morning"])
    for text in far:  # no word in common with the added sentence: read exactly as before
        assert scorer.scores(text) == before[text]
    assert np.array_equal(scorer._weights, weights)  # the fitted arrays (which may be shared) untouched
    assert len(scorer.similarities(sentence)) == len(EXAMPLES) + 1


def test_an_added_sentence_of_a_new_label_gives_it_a_column() -> None:
    scorer = LexicalScorer(cache=None)
    scorer.fit(EXAMPLES)
    scorer.add([("out_of_scope/reviewed", "book me a table for two")])
    assert scorer.labels[-1] == "out_of_scope/reviewed"
    read = scorer.scores("book me a table for two")
    assert max(read, key=read.get) == "out_of_scope/reviewed"
    assert sum(scorer.scores("where is my order").values()) == pytest.approx(1.0)
