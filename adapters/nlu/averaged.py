"""Several embedded models read as one: their scores averaged per label.

Averaging the scorers' dictionaries label by label is a few hundred dictionary operations a
message. Scorers that score the same labels in one order add their share to one array instead
(`add_to`), with the same float arithmetic, and the result is one array of float64 in their label
order (LabelScores), not a dictionary: the reader keeps a thousand recent messages' scores, and as
an `array` a message's 183 scores take 1.5 KB where a tuple of floats took 5.9.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

import numpy as np

from agent.understanding.scorer import ExampleScorer
from agent.understanding.scores import LabelOrder, LabelScores


@runtime_checkable
class _Vectorized(Protocol):
    labels: list[str]

    def add_to(self, text: str, total: np.ndarray, parts: int) -> None: ...


class AveragedScorer:
    """The mean of `scorers`' scores per label, fitted and scored together.

    Args:
        scorers: the models; each is fitted on the same examples.
    """

    def __init__(self, scorers: list[ExampleScorer]):
        self.scorers = scorers
        self.labels: list[str] = []
        self._vectors: list[_Vectorized] = []
        self._order = LabelOrder(())

    def words(self) -> set[str]:
        return set().union(*(s.words() for s in self.scorers))

    def fit(self, examples: list[tuple[str, str]]) -> None:
        for scorer in self.scorers:
            scorer.fit(examples)
        self._arrange()

    def add(self, examples: list[tuple[str, str]]) -> None:
        for scorer in self.scorers:
            scorer.add(examples)
        self._arrange()

    def _arrange(self) -> None:
        vectors: list[_Vectorized] = [s for s in self.scorers if isinstance(s, _Vectorized)]
        same = len(vectors) == len(self.scorers) and all(v.labels == vectors[0].labels for v in vectors)
        # Without arrays over one label order, the scores are averaged as dictionaries.
        self._vectors = vectors if same else []
        self.labels = list(vectors[0].labels) if same else []
        self._order = LabelOrder(tuple(self.labels))

    def scores(self, text: str) -> Mapping[str, float]:
        n = len(self.scorers)
        if not self._vectors:
            total: dict[str, float] = {}
            for scorer in self.scorers:
                for label, score in scorer.scores(text).items():
                    total[label] = total.get(label, 0.0) + score / n
            return total
        # In float64 as Python floats add: 0.0 + a / n, then + b / n, and so on.
        total_vector = np.zeros(len(self.labels))
        for part in self._vectors:
            part.add_to(text, total_vector, n)
        return LabelScores(self._order, array("d", total_vector.tobytes()))

    def held_out_scores(self, groups: list[str]) -> list[dict[str, float]]:
        """The scorers' held-out scores averaged as `agentbot nlu calibrate` averages several scorers'."""
        per_scorer = [scorer.held_out_scores(groups) for scorer in self.scorers]
        return [
            {label: sum(s.get(label, 0.0) for s in row) / len(row) for label in row[0]}
            for row in zip(*per_scorer, strict=True)
        ]

    def similarities(self, text: str) -> list[float]:
        """The mean of the scorers' sentence-level similarities (those that have a view)."""
        views = [sims for scorer in self.scorers if (sims := scorer.similarities(text))]
        return [sum(col) / len(views) for col in zip(*views, strict=True)] if views else []
