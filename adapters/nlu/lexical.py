"""A linear model over the banks' words: which words and word pairs tell one label from another.

The embedded word-vector model knows what words mean but weighs them all alike, so "open a ticket,
my mouse double clicks" reads like troubleshooting; a classifier trained on the banks learns that
"ticket" decides. It is fitted with scikit-learn (TF-IDF over words and word pairs, logistic loss
by stochastic gradient descent, a second or two for the shipped banks); a message is then
scored with the fitted vocabulary and weights directly, without scikit-learn's per-call overhead.

Importing scikit-learn and fitting took about 4 s of every process start (half of it the import), so
a fitted model is kept in `cache` (the app's `var/models`) under a digest of its sentences, seed
and scikit-learn's version: a worker that restarts on the same banks loads the same arrays. They
are read memory-mapped (adapters/nlu/arrays.py): the weights, 15 MB for the shipped banks, are one
copy in the machine's page cache for every worker, of which a process touches only the rows of the
words it meets.
"""

from __future__ import annotations

import math
from collections import Counter
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

from adapters.nlu.arrays import ArrayFolder, digest
from agent.text import Runs

# scikit-learn's token pattern is r"(?u)\b\w\w+\b": the runs of word characters two or more long.
_WORDS = Runs(r"\w", shortest=2)
FOLDS = 5
FORMAT = 2  # of the cached arrays; a change of what is kept changes it
KEPT = ("labels", "terms", "idf", "weights", "bias", "data", "indices", "indptr")


class LexicalScorer:
    """Scores a message by a logistic model's probability for each label.

    Args:
        seed: the random state of the gradient descent, so a fit is the same on every start.
        cache: a folder for fitted models (made when first written); None fits on every start.
    """

    def __init__(self, seed: int = 0, cache: Path | None = None):
        self.seed = seed
        self.cache = cache
        self._folder = ArrayFolder(cache, "lexical") if cache is not None else None
        self.labels: list[str] = []
        self._vocabulary: dict[str, int] = {}
        self._idf = np.zeros(0, dtype=np.float32)
        self._weights = np.zeros((0, 0), dtype=np.float32)
        self._bias = np.zeros(0, dtype=np.float32)
        self._examples: list[tuple[str, str]] = []
        self._sentences: Any = None  # the fitted sentences' TF-IDF rows, by feature (scipy CSR)
        self._rows: dict[str, np.ndarray] = {}  # the same as CSR arrays, made a matrix when first needed

    def words(self) -> set[str]:
        return set()

    def fit(self, examples: list[tuple[str, str]]) -> None:
        self._examples = list(examples)
        key = self._key(examples)
        if self._folder is None or not self._load(self._folder.load(key, KEPT)):
            self._fit(examples)
            if self._folder is not None:
                self._load(self._folder.save(key, self._arrays()))

    def _fit(self, examples: list[tuple[str, str]]) -> None:
        self._examples = list(examples)
        vectorizer, model = self._fitted(examples)
        self.labels = [str(c) for c in model.classes_]
        self._vocabulary = {str(k): int(v) for k, v in vectorizer.vocabulary_.items()}
        self._idf = vectorizer.idf_.astype(np.float32)
        # Features by row, so a message's few features are gathered as rows, not scattered columns.
        self._weights = np.ascontiguousarray(model.coef_.T, dtype=np.float32)
        self._bias = model.intercept_.astype(np.float32)
        rows = vectorizer.transform([s for _, s in examples]).T.tocsr().astype(np.float32)
        self._sentences = rows
        self._rows = {"data": rows.data, "indices": rows.indices, "indptr": rows.indptr}

    def _key(self, examples: list[tuple[str, str]]) -> str:
        return digest(FORMAT, self.seed, version("scikit-learn"), examples)

    def _arrays(self) -> dict[str, np.ndarray]:
        terms = sorted(self._vocabulary, key=self._vocabulary.__getitem__)
        return {
            "labels": np.array(self.labels),
            "terms": np.array(terms),
            "idf": self._idf,
            "weights": self._weights,
            "bias": self._bias,
            **self._rows,
        }

    def _load(self, arrays: dict[str, np.ndarray] | None) -> bool:
        """Takes the model from `arrays` (kept ones, memory-mapped); False when there are none or
        they do not fit together."""
        if arrays is None:
            return False
        labels, terms = arrays["labels"].tolist(), arrays["terms"].tolist()
        weights, bias, idf = arrays["weights"], arrays["bias"], arrays["idf"]
        if weights.shape != (len(terms), len(labels)) or bias.shape != (len(labels),) or idf.shape != (len(terms),):
            return False
        self.labels, self._weights, self._bias, self._idf = labels, weights, bias, idf
        self._vocabulary = {term: n for n, term in enumerate(terms)}
        self._rows = {name: arrays[name] for name in ("data", "indices", "indptr")}
        self._sentences = None
        return True

    def _fitted(self, examples: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import SGDClassifier

        vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
        matrix = vectorizer.fit_transform([s for _, s in examples])
        model = SGDClassifier(
            loss="log_loss", alpha=1e-5, class_weight="balanced", max_iter=50, tol=1e-4, random_state=self.seed
        )
        model.fit(matrix, [label for label, _ in examples])
        return vectorizer, model

    def _features(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The message's TF-IDF features as scikit-learn's sublinear TfidfVectorizer gives them:
        the indices of its known words and word pairs, in the order they first occur, and their
        values, (1 + log count) times the feature's idf, the whole scaled to unit length."""
        words = _WORDS(text.lower())
        get = self._vocabulary.get
        terms = [*map(get, words), *map(get, map(" ".join, zip(words, words[1:], strict=False)))]
        counts = Counter(n for n in terms if n is not None)
        indices = np.fromiter(counts, dtype=np.intp, count=len(counts))
        # (1 + log count) in float64, then float32, as scikit-learn computes it (1 for a single occurrence).
        sublinear = 1 + np.log(np.fromiter(counts.values(), dtype=np.float64, count=len(counts)))
        values = self._idf[indices] * sublinear.astype(np.float32)
        square = values.astype(np.float64)
        length = np.float32(math.sqrt(square @ square))
        return indices, values / length if length else values

    def add_to(self, text: str, total: np.ndarray, parts: int) -> None:
        """Adds a `parts`th of each of `labels`' scores to `total` (float64, in that order)."""
        indices, values = self._features(text)
        # One-versus-rest logistic outputs, normalized to sum to one as scikit-learn's predict_proba does.
        outputs = values @ self._weights[indices] + self._bias
        with np.errstate(over="ignore"):  # a large negative output's exp is inf: its probability 0
            outputs = 1 / (1 + np.exp(-outputs))
        if summed := outputs.sum():
            outputs /= summed
        total += outputs.astype(np.float64) / parts

    def scores(self, text: str) -> dict[str, float]:
        total = np.zeros(len(self.labels))
        self.add_to(text, total, 1)
        return dict(zip(self.labels, total.tolist(), strict=True))

    def similarities(self, text: str) -> list[float]:
        """Cosine similarity of TF-IDF vectors to each fitted sentence: the words they share,
        rare words weighing more."""
        indices, values = self._features(text)
        if len(indices) == 0 or not self._rows:
            return [0.0] * len(self._examples)
        if self._sentences is None:
            from scipy.sparse import csr_matrix

            rows = self._rows
            shape = (len(rows["indptr"]) - 1, len(self._examples))
            self._sentences = csr_matrix((rows["data"], rows["indices"], rows["indptr"]), shape=shape)
        sims: list[float] = np.asarray(self._sentences[indices].T @ values).ravel().tolist()
        return sims

    def held_out_scores(self, groups: list[str]) -> list[dict[str, float]]:
        """For each fitted sentence, its scores from a model fitted without its group (five folds,
        a group always in one fold)."""
        examples = self._examples
        codes = {g: n for n, g in enumerate(dict.fromkeys(groups))}
        folds = [codes[g] % FOLDS for g in groups]
        out: list[dict[str, float] | None] = [None] * len(examples)
        try:
            for fold in range(FOLDS):
                held = [n for n in range(len(examples)) if folds[n] == fold]
                kept = [examples[n] for n in range(len(examples)) if folds[n] != fold]
                self._fit(kept)
                for n in held:
                    scores = self.scores(examples[n][1])
                    out[n] = {label: scores.get(label, 0.0) for label in {lb for lb, _ in examples}}
        finally:
            self.fit(examples)
        return [s or {} for s in out]
