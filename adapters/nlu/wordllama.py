"""Nearest-example similarity with wordllama's embedded 256-dimension model (shipped in its wheel)."""

from __future__ import annotations

import os

import numpy as np


class WordLlamaScorer:
    """Scores a message by its cosine similarity to the closest bank sentences of each label.

    Args:
        top_k: how many of a label's closest sentences are averaged (1 = nearest example).
    """

    def __init__(self, top_k: int = 2):
        try:
            import wordllama
            from wordllama import WordLlama
        except ImportError as e:  # pragma: no cover - a dependency of the package
            raise RuntimeError("rules understanding needs wordllama: pip install wordllama") from e
        # The wheel ships the weights and tokenizer; pointing cache_dir at the package never downloads.
        self.model = WordLlama.load(cache_dir=os.path.dirname(wordllama.__file__), disable_download=True)
        self.top_k = top_k
        self.labels: list[str] = []
        self._masks: np.ndarray = np.zeros((0, 0), dtype=bool)
        self._bank: np.ndarray = np.zeros((0, 256), dtype=np.float32)

    def fit(self, examples: list[tuple[str, str]]) -> None:
        self.labels = sorted({label for label, _ in examples})
        names = np.array([label for label, _ in examples])
        self._masks = np.stack([names == label for label in self.labels])
        self._bank = self.model.embed([s for _, s in examples], norm=True)

    def scores(self, text: str) -> dict[str, float]:
        sims = self._bank @ self.model.embed([text], norm=True)[0]
        out = {}
        for label, mask in zip(self.labels, self._masks, strict=True):
            row = sims[mask]
            k = min(self.top_k, row.size)
            out[label] = float(np.partition(row, -k)[-k:].mean())
        return out
