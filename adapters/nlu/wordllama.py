"""Nearest-example similarity with wordllama's embedded model (the table ships in its wheel).

The table has 256 columns; it was trained so that its leading columns are a smaller model of their
own (Matryoshka training), so `dimensions=128` reads with the first half of each row.

Given a cache folder (the app's `var/models`), the table's columns in use (16 MB as float32), the
tokenizer's merges (adapters/nlu/pieces.py) and the bank sentences' vectors are kept there as .npy
files and read memory-mapped (adapters/nlu/arrays.py): one copy for every worker on the machine,
of which a process touches only the rows of the tokens it meets, and a start on the same banks
reads no safetensors file and embeds no sentence.
"""

from __future__ import annotations

import functools
import importlib.util
import math
from collections import OrderedDict
from importlib.metadata import version
from pathlib import Path

import numpy as np

from adapters.nlu import pieces
from adapters.nlu.arrays import ArrayFolder, digest
from adapters.nlu.pieces import Pieces

# How many tokens' similarity columns a worker keeps (a 16-bit integer per bank sentence each): the
# bound on this cache's memory, traded against reading speed (docs/performance.md measures both
# at other counts). A column is the same whichever row keeps it, so the count changes no decision
# short of a message of more distinct tokens than it: that one is read against the whole bank.
COLUMNS = 1024
# The files of wordllama's model in its wheel (its `l2_supercat` configuration).
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_WEIGHTS = "weights/l2_supercat_256.safetensors"
FORMAT = 2  # of the cached arrays; a change of what is kept changes it


class WordLlamaScorer:
    """Scores a message by its cosine similarity to the closest bank sentences of each label.

    Args:
        dimensions: how many leading columns of the embedding table to use.
        top_k: how many of a label's closest sentences are averaged (1 = nearest example).
    """

    def __init__(self, dimensions: int = 128, top_k: int = 2, cache: Path | None = None):
        self._folder = ArrayFolder(cache, "wordllama") if cache is not None else None
        self.pieces, self.table, self._words, self._by_word = self._model(dimensions)
        self._word_ids = functools.lru_cache(maxsize=16384)(self._encoded)
        # Knowledge-base titles and headings are compared again on every search; their vectors are kept.
        self._unit = functools.lru_cache(maxsize=4096)(self.embed)
        self.top_k = top_k
        self.labels: list[str] = []
        self._examples: list[tuple[str, str]] = []
        self._by_label: np.ndarray = np.zeros((0, dimensions), dtype=np.float32)
        # The kept columns are rows of one array (`_slab`, each row times its `_scale`); `_rows` maps
        # a token to its row, the least recently used first.
        self._slab: np.ndarray = np.zeros((0, 0), dtype=np.int16)
        self._scale: np.ndarray = np.zeros(0, dtype=np.float32)
        self._rows: OrderedDict[int, int] = OrderedDict()
        self._order: np.ndarray = np.zeros(0, dtype=np.intp)
        self._position: np.ndarray = np.zeros(0, dtype=np.intp)
        self._starts: np.ndarray = np.zeros(0, dtype=np.intp)
        self._sizes: np.ndarray = np.zeros(0, dtype=np.intp)
        self._single: np.ndarray = np.zeros(0, dtype=bool)
        self._any_single = False
        self._slots: np.ndarray = np.zeros((0, 0), dtype=np.intp)

    def _model(self, dimensions: int) -> tuple[Pieces, np.ndarray, set[str], bool]:
        """The tokenizer, the table's leading `dimensions` columns as float32, the tokenizer's whole
        words and whether it tokenizes word by word: from the cache folder where they are kept."""
        tokenizer_file, weights = _shipped_files()
        self._table_key = digest(FORMAT, version("wordllama"), str(weights), dimensions)
        names = ("table", "words", "by_word", *pieces.NAMES)
        kept = self._folder.load(self._table_key, names) if self._folder is not None else None
        if kept is None:
            kept = _table(weights, dimensions, tokenizer_file)
            if self._folder is not None:
                kept = self._folder.save(self._table_key, kept)
        return Pieces(kept), kept["table"], set(kept["words"].tolist()), bool(kept["by_word"])

    def words(self) -> set[str]:
        """Whole English words of five letters or more in the model's tokenizer: common enough that
        a typo repair must leave them alone ("think" is not a misspelt "thank")."""
        return set(self._words)

    def fit(self, examples: list[tuple[str, str]]) -> None:
        self._examples = list(examples)
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
        self._by_label = self._bank_vectors([examples[n][1] for n in self._order.tolist()])
        self._position = np.argsort(self._order)
        # Pages of the slab are taken from the system only as columns fill them.
        self._slab = np.empty((COLUMNS, len(examples)), dtype=np.int16)
        self._scale = np.zeros(COLUMNS, dtype=np.float32)
        self._rows = OrderedDict()

    def _bank_vectors(self, sentences: list[str]) -> np.ndarray:
        """The sentences' embeddings, one row each: kept in the cache folder under a digest of the
        sentences and the table, so banks changed by a label or an edit are embedded again."""
        if not sentences:
            return np.zeros((0, self.table.shape[1]), dtype=np.float32)
        key = digest(FORMAT, self._table_key, sentences)
        kept = self._folder.load(key, ("vectors",), whole=("vectors",)) if self._folder is not None else None
        if kept is not None and kept["vectors"].shape == (len(sentences), self.table.shape[1]):
            return kept["vectors"]
        vectors = np.stack([self.embed(s) for s in sentences])
        if self._folder is None:
            return vectors
        return self._folder.save(key, {"vectors": vectors}, whole=("vectors",))["vectors"]

    def add(self, examples: list[tuple[str, str]]) -> None:
        """A label's score is the mean of its closest sentences: with the added ones among them it
        is the model fitted on them all, and only messages near an added sentence read otherwise."""
        self.fit([*self._examples, *examples])

    def _encoded(self, text: str) -> list[int]:
        return self.pieces.encode(text)

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

    def _kept_rows(self, tokens: list[int]) -> list[int] | None:
        """The slab rows of `tokens`' similarity columns, each kept first where it is not; None when
        they are more distinct tokens than the slab keeps.

        A message's similarity to a bank sentence is linear in its tokens: the sum of each token's
        similarity column, divided by the length of the tokens' sum. The columns of recent tokens
        are kept, so a message of known words costs a few additions instead of a pass over the
        whole bank (3 MB, more than a core's cache); a new token's column is one product with it.
        """
        rows = self._rows
        distinct = dict.fromkeys(tokens)
        if len(distinct) > COLUMNS:
            return None
        for token in distinct:
            if token in rows:
                rows.move_to_end(token)  # used now: the last to be given up
        for token in distinct:
            if token not in rows:
                # The least recently used row is given up; the message's own were just marked used.
                row = rows.popitem(last=False)[1] if len(rows) == COLUMNS else len(rows)
                self._keep(token, row)
                rows[token] = row
        return [rows[token] for token in tokens]

    def _keep(self, token: int, row: int) -> None:
        """Keeps `token`'s similarity column in the slab's `row`, as 16-bit integers times
        `_scale[row]` (within 1/65,534 of its largest value: half the memory of float32, so twice
        the columns fit in the same space)."""
        # One matrix-vector product each: for two or more tokens at once, BLAS's matrix product
        # took longer than as many of these.
        column = self._by_label @ self.table[token]
        top = np.abs(column).max(initial=np.float32(0.0))
        factor = top / np.float32(32767.0) if top > 0 else np.float32(1.0)
        self._scale[row] = factor
        self._slab[row] = np.rint(column / factor)

    def _similarities(self, ids: list[int]) -> np.ndarray:
        """The cosine similarity of the text of `ids` to each bank sentence, in label order."""
        if not ids:
            return np.zeros(len(self._by_label), dtype=np.float32)
        # An id past the table reads its last row.
        tokens = np.minimum(np.array(ids, dtype=np.intp), len(self.table) - 1)
        vector = self.table[tokens].sum(axis=0, dtype=np.float32)
        square = vector.astype(np.float64)
        length = np.float32(math.sqrt(square @ square))
        if not length:
            return np.zeros(len(self._by_label), dtype=np.float32)
        rows = self._kept_rows(tokens.tolist())
        if rows is None:  # more distinct tokens than the slab keeps: the whole bank, once
            return np.asarray(self._by_label @ (vector / length))
        # The kept columns' sum: gathered, made float32 and added by BLAS (numpy's own product of
        # float32 and int16 arrays takes three times as long).
        sims: np.ndarray = self._scale[rows] @ self._slab[rows].astype(np.float32)
        sims /= length
        return sims

    def add_to(self, text: str, total: np.ndarray, parts: int) -> None:
        """Adds a `parts`th of each of `labels`' scores to `total` (float64, in that order)."""
        total += self._top(self._similarities(self.ids(text))).astype(np.float64) / parts

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


def _shipped_files() -> tuple[Path, Path]:
    """The tokenizer file and the folder of the 16-bit embedding table that wordllama's wheel
    ships. The package itself is not imported: it brings an HTTP client, pydantic models and
    compiled clustering code, 29 MB of a process that needs two files."""
    spec = importlib.util.find_spec("wordllama")
    for folder in map(Path, (spec.submodule_search_locations or []) if spec else []):
        tokenizer, weights = folder / _TOKENIZER, folder / _WEIGHTS
        if tokenizer.is_file() and weights.is_file():
            return tokenizer, weights
    raise RuntimeError(
        "rules understanding needs the model files of wordllama 0.4: pip install 'wordllama>=0.4.0.post1,<0.5'"
    )


def _table(weights: Path, dimensions: int, tokenizer: Path) -> dict[str, np.ndarray]:
    """The arrays kept for the model: the table's leading columns as float32, read as wordllama's
    loader reads them, the tokenizer's whole words, whether it tokenizes word by word, and its merges."""
    from safetensors import safe_open

    with safe_open(str(weights), framework="np") as f:
        table = np.ascontiguousarray(f.get_tensor("embedding.weight")[:, :dimensions], dtype=np.float32)
    merges = pieces.kept_arrays(tokenizer)
    vocab = pieces.vocabulary(tokenizer)
    # The tokenizer joins no piece across a space: no token has "\u2581" (its space) after a first
    # character, but for runs of it alone. A text of single spaces is then tokenized word by word.
    by_word = not any("\u2581" in k[1:] and k.strip("\u2581") for k in vocab)
    words = sorted({k[1:].lower() for k in vocab if k.startswith("\u2581") and k[1:].isalpha() and len(k) > 4})
    return {"table": table, "words": np.array(words), "by_word": np.array(by_word), **merges}
