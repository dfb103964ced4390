"""The embedded model's seam: how close a message is to the banks' labelled example sentences.

Implemented in adapters/nlu/ (the averaged word vectors, WordLlama); the reading (reading.py) and
calibration consume it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable


@runtime_checkable
class MeaningSimilarity(Protocol):
    """How close in meaning short texts are, by the embedded model that understanding uses (a
    knowledge-base section is chosen by what it is about, not by the words it shares). Pure CPU."""

    def similarity(self, text: str, others: list[str]) -> list[float]:
        """Cosine similarity of `text` to each of `others`, in order: 1 for the same meaning, near 0
        for unrelated texts."""
        ...


@runtime_checkable
class ExampleScorer(Protocol):
    """A small embedded model that says how close a message is to labelled example sentences.

    `fit` runs once at start-up with every (label, sentence) pair of the banks; `scores` then maps
    a message to a score in [0, 1] per label (higher is closer). Pure CPU, no network.
    """

    def fit(self, examples: list[tuple[str, str]]) -> None: ...

    def add(self, examples: list[tuple[str, str]]) -> None:
        """Extend the fitted model with more (label, sentence) pairs without fitting it again: a
        sentence a person labelled changes how it and the messages near it read, and nothing
        else (a label new to the model is added too)."""
        ...

    def scores(self, text: str) -> Mapping[str, float]: ...

    def held_out_scores(self, groups: list[str]) -> list[dict[str, float]]:
        """For each fitted sentence, in order, its scores with its whole group left out (for
        calibration: sentences that share a group are held out together)."""
        ...

    def words(self) -> set[str]:
        """Words the model knows well enough that a typo repair must leave them alone."""
        ...

    def similarities(self, text: str) -> list[float]:
        """The message's similarity to each fitted sentence, in fit order (the few-shot examples
        an LLM prompt shows are the nearest ones); [] when the model has no sentence-level view."""
        ...
