"""Nearest-example similarity with wordllama's embedded 256-dimension model (shipped in its wheel)."""

from __future__ import annotations

import math
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
        self._bank: np.ndarray = np.zeros((0, 256), dtype=np.float32)
        self._slots: np.ndarray = np.zeros((0, 0), dtype=np.intp)

    def words(self) -> set[str]:
        """Whole English words of four letters or more in the model's tokenizer: common enough that a
        typo repair must leave them alone ("think" is not a misspelt "thank")."""
        vocab = self.model.tokenizer.get_vocab()
        return {k[1:].lower() for k in vocab if k.startswith("\u2581") and k[1:].isalpha() and len(k) > 4}

    def fit(self, examples: list[tuple[str, str]]) -> None:
        self.labels = sorted({label for label, _ in examples})
        rows: list[list[int]] = [[] for _ in self.labels]
        index = {label: i for i, label in enumerate(self.labels)}
        for n, (label, _) in enumerate(examples):
            rows[index[label]].append(n)
        # One row of sentence positions per label, padded with a position whose similarity is -inf,
        # so a message is scored against every label with one matrix product and one partition.
        width = max(max(len(r) for r in rows), self.top_k)
        pad = len(examples)
        self._slots = np.array(
            [r + [r[0]] * (self.top_k - len(r)) + [pad] * (width - max(len(r), self.top_k)) for r in rows],
            dtype=np.intp,
        )
        # A last row of zeros is the padding position; `scores` sets its similarity to -inf.
        bank = self.model.embed([s for _, s in examples], norm=True)
        self._bank = np.vstack([bank, np.zeros((1, bank.shape[1]), dtype=bank.dtype)])

    def embed(self, text: str) -> np.ndarray:
        """One message's normalized embedding: wordllama's own pooling without its batch padding,
        masks and copies, which cost more than the arithmetic for a single short message."""
        ids = self.model.tokenizer.encode(text, add_special_tokens=False).ids
        if not ids:
            return self.model.embed([text], norm=True)[0]  # type: ignore[no-any-return]
        table = self.model.embedding
        last = table.shape[0] - 1
        vector = table[[i if i < last else last for i in ids]].sum(axis=0, dtype=np.float32)
        # The mean's scale cancels in the normalization.
        return np.asarray(vector / math.sqrt(float(vector @ vector)))

    def scores(self, text: str) -> dict[str, float]:
        sims = self._bank @ self.embed(text)
        sims[-1] = -np.inf
        top = np.partition(sims[self._slots], -self.top_k, axis=1)[:, -self.top_k :].sum(axis=1) / self.top_k
        return dict(zip(self.labels, top.tolist(), strict=True))
