"""Nearest-example similarity with wordllama's embedded model (the table ships in its wheel).

The table has 256 columns; it was trained so that its leading columns are a smaller model of their
own (Matryoshka training), so `dimensions=128` reads with the first half of each row.
"""

from __future__ import annotations

import functools
import importlib.util
import math
from pathlib import Path
from typing import Any

import numpy as np

from adapters.nlu.kernels import loops

# How many tokens' similarity columns are kept (a 16-bit integer per bank sentence each, 12 KB for
# the shipped banks): about 25 MB once a process has met that many tokens. Twice as many took
# CLINC150's messages with a token whose column is not kept from 38% to 27%, and saved the p50
# message about 6 us, for 25 MB more.
COLUMNS = 2048
# The files of wordllama's model in its wheel (its `l2_supercat` configuration).
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_WEIGHTS = "weights/l2_supercat_256.safetensors"
# Past this many new tokens in one message, the rows to give up are chosen by a partition, not by
# one pass over the stamps for each.
_FEW = 16


class WordLlamaScorer:
    """Scores a message by its cosine similarity to the closest bank sentences of each label.

    Args:
        dimensions: how many leading columns of the embedding table to use.
        top_k: how many of a label's closest sentences are averaged (1 = nearest example).
    """

    def __init__(self, dimensions: int = 128, top_k: int = 2):
        self.tokenizer, table = _shipped_model()
        self.table = np.ascontiguousarray(table[:, :dimensions], dtype=np.float32)
        # The tokenizer joins no piece across a space: no token has "\u2581" (its space) after a
        # first character, but for runs of it alone. A text of single spaces is then tokenized
        # word by word, each word's ids remembered (most words recur; the tokenizer's call costs more).
        vocab = self.tokenizer.get_vocab()
        self._by_word = not any("\u2581" in k[1:] and k.strip("\u2581") for k in vocab)
        self._word_ids = functools.lru_cache(maxsize=16384)(self._encoded)
        # Knowledge-base titles and headings are compared again on every search; their vectors are kept.
        self._unit = functools.lru_cache(maxsize=4096)(self.embed)
        self.top_k = top_k
        self.labels: list[str] = []
        self._by_label: np.ndarray = np.zeros((0, dimensions), dtype=np.float32)
        # The kept columns are rows of one array (`_slab`, each row times its `_scale`): `_row_of` a
        # token's row (-1 for none), `_token_of` a row's token, `_stamp` the message that last used
        # it (`_clock` counts them).
        self._slab: np.ndarray = np.zeros((0, 0), dtype=np.int16)
        self._scale: np.ndarray = np.zeros(0, dtype=np.float32)
        self._forget_columns()
        self._order: np.ndarray = np.zeros(0, dtype=np.intp)
        self._position: np.ndarray = np.zeros(0, dtype=np.intp)
        self._starts: np.ndarray = np.zeros(0, dtype=np.intp)
        self._sizes: np.ndarray = np.zeros(0, dtype=np.intp)
        self._single: np.ndarray = np.zeros(0, dtype=bool)
        self._any_single = False
        self._slots: np.ndarray = np.zeros((0, 0), dtype=np.intp)

    def words(self) -> set[str]:
        """Whole English words of five letters or more in the model's tokenizer: common enough that
        a typo repair must leave them alone ("think" is not a misspelt "thank")."""
        vocab = self.tokenizer.get_vocab()
        return {k[1:].lower() for k in vocab if k.startswith("\u2581") and k[1:].isalpha() and len(k) > 4}

    def fit(self, examples: list[tuple[str, str]]) -> None:
        self.labels = sorted({label for label, _ in examples})
        rows: list[list[int]] = [[] for _ in self.labels]
        index = {label: i for i, label in enumerate(self.labels)}
        for n, (label, _) in enumerate(examples):
            rows[index[label]].append(n)
        # The bank sentences in label order (`_order`), each label's sentences in a run: a label's
        # closest sentences are then found by reductions over the runs (np.maximum.reduceat).
        self._order = np.array([n for r in rows for n in r], dtype=np.intp)
        self._sizes = np.array([len(r) for r in rows], dtype=np.intp)
        self._starts = np.concatenate([[0], np.cumsum(self._sizes)[:-1]]).astype(np.intp)
        self._single = self._sizes == 1
        self._any_single = bool(self._single.any())
        # For top_k above 2: one row of positions per label, padded with the position past the last
        # sentence, whose similarity is -inf (a label with fewer sentences than top_k repeats its first one).
        width = max(max(len(r) for r in rows), self.top_k)
        pad = len(examples)
        spans = zip(self._starts.tolist(), self._sizes.tolist(), strict=True)
        runs = [list(range(start, start + size)) for start, size in spans]
        self._slots = np.array(
            [r + [r[0]] * (self.top_k - len(r)) + [pad] * (width - max(len(r), self.top_k)) for r in runs],
            dtype=np.intp,
        )
        # The bank's vectors in label order only; `_position` is each sentence's row there.
        self._by_label = np.stack([self.embed(examples[n][1]) for n in self._order.tolist()])
        self._position = np.argsort(self._order)
        # Pages of the slab are taken from the system only as columns fill them.
        self._slab = np.empty((COLUMNS, len(examples)), dtype=np.int16)
        self._scale = np.zeros(COLUMNS, dtype=np.float32)
        self._forget_columns()
        self.scores(examples[0][1])  # the compiled loops are loaded now, not during the first message

    def _encoded(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def ids(self, text: str) -> list[int]:
        """The tokenizer's ids for `text` (word by word where that is the same)."""
        words = text.split(" ")
        if not self._by_word or "" in words or "\u2581" in text:
            return self._encoded(text)
        ids: list[int] = []
        for word in words:
            ids += self._word_ids(word)
        return ids

    def embed(self, text: str) -> np.ndarray:
        """One message's normalized embedding: the mean of its tokens' rows (the mean's scale
        cancels in the normalization), without wordllama's batch padding, masks and copies."""
        ids = self.ids(text)
        # An id past the table reads its last row.
        vector = self.table.take(ids, axis=0, mode="clip").sum(axis=0, dtype=np.float32)
        norm = math.sqrt(float(vector @ vector)) if ids else 0.0
        return np.asarray(vector / norm) if norm else np.zeros(self.table.shape[1], dtype=np.float32)

    def _top(self, sims: np.ndarray) -> np.ndarray:
        """Per label, the mean of its top_k similarities (`sims` in label order; changed in place)."""
        if self.top_k > 2:
            padded = np.concatenate([sims, np.full((*sims.shape[:-1], 1), -np.inf, dtype=sims.dtype)], axis=-1)
            return np.partition(padded[..., self._slots], -self.top_k, axis=-1)[..., -self.top_k :].mean(axis=-1)
        best = np.maximum.reduceat(sims, self._starts, axis=-1)
        if self.top_k < 2:
            return best
        # The runner-up is the best of a run without its best; it is the best again where the best
        # occurs twice in a run, or where a label has one sentence (counted twice, as padded rows were).
        at_best = sims == np.repeat(best, self._sizes, axis=-1)
        again = self._single
        if np.count_nonzero(at_best) > best.size:
            again = again | (np.add.reduceat(at_best, self._starts, axis=-1) > 1)
        np.copyto(sims, np.float32(-np.inf), where=at_best)
        second = np.maximum.reduceat(sims, self._starts, axis=-1)
        if again is not self._single or self._any_single:
            second = np.where(again, best, second)
        # The float32 arithmetic of the two's mean.
        return (second + best) / np.float32(2)

    def _forget_columns(self) -> None:
        self._row_of = np.full(len(self.table), -1, dtype=np.intp)
        self._token_of = np.full(COLUMNS, -1, dtype=np.intp)
        self._stamp = np.zeros(COLUMNS, dtype=np.int64)
        self._clock = 0

    def _kept(self, tokens: np.ndarray) -> bool:
        """Keeps the similarity column of each of `tokens`; False when they are more distinct
        tokens than the slab keeps.

        A message's similarity to a bank sentence is linear in its tokens: the sum of each token's
        similarity column, divided by the length of the tokens' sum. The columns of recent tokens
        are kept, so a message of known words costs a few additions instead of a pass over the
        whole bank (3 MB, more than a core's cache); a new token's column is one product with it.
        """
        if len(tokens) > COLUMNS and len(np.unique(tokens)) > COLUMNS:
            return False
        self._clock += 1
        missing = np.empty(len(tokens), dtype=np.intp)
        found = loops.kept_columns(tokens, self._row_of, self._stamp, self._clock, missing)
        if found:
            missing = missing[:found]
            # The least recently used rows are given up; the message's own were just marked used.
            if found <= _FEW:
                rows = loops.least_used(self._stamp, found, np.empty(found, dtype=np.intp))
            else:
                rows = np.argpartition(self._stamp, found - 1)[:found]
            given_up = self._token_of[rows]
            self._row_of[given_up[given_up >= 0]] = -1
            column = np.empty(len(self._by_label), dtype=np.float32)
            for token, row in zip(missing.tolist(), rows.tolist(), strict=True):
                # One matrix-vector product each: for two or more tokens at once, BLAS's
                # matrix product took longer than as many of these.
                np.dot(self._by_label, self.table[token], out=column)
                loops.store_column(column, self._slab, self._scale, row)
            self._row_of[missing] = rows
            self._token_of[rows] = missing
            self._stamp[rows] = self._clock
        return True

    def add_to(self, text: str, total: np.ndarray, parts: int) -> None:
        """Adds a `parts`th of each of `labels`' scores to `total` (float64, in that order)."""
        # An id past the table reads its last row.
        tokens = np.minimum(np.array(self.ids(text), dtype=np.intp), len(self.table) - 1)
        sentences = len(self._by_label)
        two = self.top_k == 2
        if not len(tokens):
            sims = np.zeros(sentences, dtype=np.float32)
        elif not self._kept(tokens):
            # More distinct tokens than the slab keeps: the whole bank, once.
            vector = self.table[tokens].sum(axis=0, dtype=np.float32)
            length = np.float32(math.sqrt(float(vector @ vector)))
            sims = np.asarray(self._by_label @ (vector / length)) if length else np.zeros(sentences, np.float32)
        elif self.top_k <= 2:
            # The common case: the sum of the kept columns and each label's best, in one call.
            tables = self.table, self._row_of, self._slab, self._scale, self._starts, self._sizes
            loops.token_scores(tokens, *tables, two, np.empty(sentences, np.float32), parts, total)
            return
        else:
            kept = self._row_of, self._slab, self._scale
            sims = loops.token_similarities(tokens, self.table, *kept, np.empty(sentences, np.float32))
        if self.top_k > 2:
            total += self._top(sims).astype(np.float64) / parts
        else:
            # These similarities are divided by the length already.
            loops.best_of_runs(sims, np.float32(1.0), self._starts, self._sizes, two, parts, total)

    def scores(self, text: str) -> dict[str, float]:
        total = np.zeros(len(self.labels))
        self.add_to(text, total, 1)
        return dict(zip(self.labels, total.tolist(), strict=True))

    def similarities(self, text: str) -> list[float]:
        """Cosine similarity to each fitted sentence."""
        sims: list[float] = (self._by_label @ self.embed(text))[self._position].tolist()
        return sims

    def similarity(self, text: str, others: list[str]) -> list[float]:
        """Cosine similarity of `text` to each of `others` (MeaningSimilarity). Both sides are read in
        lower case: the table has rows for "Headset" and "headset" that lie far apart, and a title's
        capital letter says nothing about its meaning."""
        if not others:
            return []
        sims: np.ndarray = np.stack([self._unit(o.lower()) for o in others]) @ self._unit(text.lower())
        return [float(x) for x in sims]

    def held_out_scores(self, groups: list[str]) -> list[dict[str, float]]:
        """For each fitted sentence, its scores against the banks without its group."""
        out: list[dict[str, float]] = []
        codes = {g: n for n, g in enumerate(dict.fromkeys(groups))}
        group = np.array([codes[g] for g in groups])
        by_label = group[self._order]
        bank = self._by_label[self._position]
        for start in range(0, len(bank), 512):
            sims = bank[start : start + 512] @ self._by_label.T
            sims[group[start : start + 512, None] == by_label[None, :]] = -np.inf
            top = self._top(sims)
            out += [dict(zip(self.labels, r.tolist(), strict=True)) for r in top]
        return out


def _shipped_model() -> tuple[Any, np.ndarray]:
    """The tokenizer and 16-bit embedding table that wordllama's wheel ships, read as wordllama's
    loader reads them. The package itself is not imported: it brings an HTTP client, pydantic
    models and compiled clustering code, 29 MB of a process that needs two files."""
    from safetensors import safe_open
    from tokenizers import Tokenizer

    spec = importlib.util.find_spec("wordllama")
    for folder in map(Path, (spec.submodule_search_locations or []) if spec else []):
        tokenizer, weights = folder / _TOKENIZER, folder / _WEIGHTS
        if tokenizer.is_file() and weights.is_file():
            with safe_open(str(weights), framework="np") as f:
                table = f.get_tensor("embedding.weight")
            return Tokenizer.from_file(str(tokenizer)), table
    raise RuntimeError(
        "rules understanding needs the model files of wordllama 0.4: pip install 'wordllama>=0.4.0.post1,<0.5'"
    )
