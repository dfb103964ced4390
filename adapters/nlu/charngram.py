"""A linear classifier over character n-grams (scikit-learn), trained on the example banks at start-up."""

from __future__ import annotations

import numpy as np


class CharNgramScorer:
    """Class probabilities from logistic regression on TF-IDF character 2-5-grams.

    Character n-grams read typos and word endings ("tarck", "refunded") that a word model misses.
    """

    def __init__(self, c: float = 10.0):
        try:
            from sklearn.feature_extraction.text import TfidfVectorizer
            from sklearn.linear_model import LogisticRegression
        except ImportError as e:  # pragma: no cover - a dependency of the package
            raise RuntimeError("rules understanding needs scikit-learn: pip install scikit-learn") from e
        self.vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, lowercase=True)
        self.model = LogisticRegression(C=c, max_iter=3000)
        self.labels: list[str] = []

    def fit(self, examples: list[tuple[str, str]]) -> None:
        x = self.vectorizer.fit_transform([s for _, s in examples])
        self.model.fit(x, [label for label, _ in examples])
        self.labels = [str(c) for c in self.model.classes_]
        # Dense weights make one message's scoring a sparse dot product with no per-call checks.
        self._coef = np.ascontiguousarray(self.model.coef_.T)
        self._bias = self.model.intercept_

    def scores(self, text: str) -> dict[str, float]:
        x = self.vectorizer.transform([text])
        logits = x @ self._coef + self._bias
        logits = np.asarray(logits).ravel()
        p = np.exp(logits - logits.max())
        p /= p.sum()
        return dict(zip(self.labels, map(float, p), strict=True))
