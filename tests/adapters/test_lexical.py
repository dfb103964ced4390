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
