"""The scorers' loops over the banks, compiled (numba).

In numpy, a message's word-vector scores took about fifteen calls over the bank's 6,000
similarities (adding its tokens' columns, then each label's best two by reductions, masks and a
second reduction), and the lexical model's outputs ten more over its labels, each a pass over
memory and a microsecond or two of call overhead. Here each step is one pass in one call.
Compiled once per machine: the machine code is kept beside this file, or in the user's cache folder
where that is not writable; where neither is, each process compiles it again (about a second).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit


def compiled(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` compiled, its machine code kept where numba finds a writable folder."""
    try:
        return njit(cache=True, nogil=True, boundscheck=False)(function)  # type: ignore[no-any-return]
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return njit(nogil=True, boundscheck=False)(function)  # type: ignore[no-any-return]


@compiled
def kept_columns(ids: np.ndarray, row_of: np.ndarray, stamp: np.ndarray, clock: int, missing: np.ndarray) -> int:
    """Marks the kept columns of `ids` used at `clock` and writes the distinct ids without one into
    `missing`; returns how many those are."""
    count = 0
    for n in range(ids.shape[0]):
        token = ids[n]
        row = row_of[token]
        if row >= 0:
            stamp[row] = clock
            continue
        seen = False
        for m in range(count):
            seen = seen or missing[m] == token
        if not seen:
            missing[count] = token
            count += 1
    return count


@compiled
def token_similarities(
    ids: np.ndarray, table: np.ndarray, row_of: np.ndarray, slab: np.ndarray, scale: np.ndarray, out: np.ndarray
) -> np.ndarray:
    """`out` = the cosine similarity of the text of `ids` to each bank sentence: the sum of the
    tokens' kept columns (`slab` rows times their `scale`), in their order, divided by the length
    of their vectors' sum."""
    width = table.shape[1]
    vector = np.zeros(width, dtype=np.float32)
    for n in range(ids.shape[0]):
        row = table[ids[n]]
        for d in range(width):
            vector[d] += row[d]
    square = 0.0
    for d in range(width):
        square += np.float64(vector[d]) * np.float64(vector[d])
    norm = np.float32(np.sqrt(square))
    if ids.shape[0] == 0 or norm == 0:
        out[:] = 0
        return out
    return summed_columns(slab, scale, row_of[ids], norm, out)


@compiled
def token_scores(
    ids: np.ndarray,
    table: np.ndarray,
    row_of: np.ndarray,
    slab: np.ndarray,
    scale: np.ndarray,
    starts: np.ndarray,
    sizes: np.ndarray,
    two: bool,
    sims: np.ndarray,
    out: np.ndarray,
) -> np.ndarray:
    """`token_similarities`, then `best_of_runs` of them, in one call."""
    return best_of_runs(token_similarities(ids, table, row_of, slab, scale, sims), starts, sizes, two, out)


@compiled
def summed_columns(
    slab: np.ndarray, scale: np.ndarray, rows: np.ndarray, norm: np.float32, out: np.ndarray
) -> np.ndarray:
    """`out` = the sum of `slab`'s `rows`, each times its `scale`, in their order, divided by `norm`
    (float32 throughout)."""
    n = out.shape[0]
    first, factor = slab[rows[0]], scale[rows[0]]
    for j in range(n):
        out[j] = factor * np.float32(first[j])
    for t in range(1, rows.shape[0]):
        row, factor = slab[rows[t]], scale[rows[t]]
        for j in range(n):
            out[j] += factor * np.float32(row[j])
    for j in range(n):
        out[j] = out[j] / norm
    return out


@compiled
def least_used(stamp: np.ndarray, count: int, rows: np.ndarray) -> np.ndarray:
    """`rows` = the `count` positions of the smallest `stamp`s (a few of thousands: one pass each)."""
    taken = np.zeros(stamp.shape[0], dtype=np.bool_)
    for n in range(count):
        best = -1
        for r in range(stamp.shape[0]):
            if not taken[r] and (best < 0 or stamp[r] < stamp[best]):
                best = r
        taken[best] = True
        rows[n] = best
    return rows


@compiled
def store_column(column: np.ndarray, slab: np.ndarray, scale: np.ndarray, row: int) -> None:
    """Keeps `column` in `slab`'s `row` as 16-bit integers times `scale[row]` (within 1/65,534 of
    its largest value: half the memory of float32, so twice the columns fit in the same space)."""
    top = np.float32(0.0)
    for j in range(column.shape[0]):
        top = max(top, abs(column[j]))
    factor = top / np.float32(32767.0) if top > 0 else np.float32(1.0)
    scale[row] = factor
    target = slab[row]
    for j in range(column.shape[0]):
        target[j] = np.int16(np.rint(column[j] / factor))


@compiled
def best_of_runs(sims: np.ndarray, starts: np.ndarray, sizes: np.ndarray, two: bool, out: np.ndarray) -> np.ndarray:
    """Per run of `sims` (a label's sentences), its best, or with `two` the mean of its best two. The
    best counts twice where it occurs twice or where a run has one sentence."""
    for label in range(starts.shape[0]):
        start = starts[label]
        best = sims[start]
        second = np.float32(-np.inf)
        for j in range(start + 1, start + sizes[label]):
            # Without branches, which the processor would mispredict: a tie with the best is its second.
            value = sims[j]
            second = max(second, min(best, value))
            best = max(best, value)
        if not two or sizes[label] == 1:
            out[label] = best
        else:
            out[label] = (second + best) / np.float32(2)
    return out


@compiled
def logistic_scores(
    weights: np.ndarray, bias: np.ndarray, features: np.ndarray, values: np.ndarray, out: np.ndarray
) -> np.ndarray:
    """One-versus-rest logistic outputs over `weights`' rows `features` (with their `values`),
    normalized to sum to one as scikit-learn's predict_proba does."""
    for label in range(out.shape[0]):
        out[label] = bias[label]
    for n in range(features.shape[0]):
        row = weights[features[n]]
        value = values[n]
        for label in range(out.shape[0]):
            out[label] += value * row[label]
    total = np.float32(0.0)
    for label in range(out.shape[0]):
        out[label] = np.float32(1.0) / (np.float32(1.0) + np.exp(-out[label]))
        total += out[label]
    if total:
        for label in range(out.shape[0]):
            out[label] /= total
    return out


@compiled
def counted(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct `ids`, in the order they first occur, and how often each occurs (a message has
    a few dozen: one pass over those before it each)."""
    distinct = np.empty(ids.shape[0], dtype=np.intp)
    counts = np.zeros(ids.shape[0], dtype=np.intp)
    found = 0
    for n in range(ids.shape[0]):
        at = found
        for m in range(found):
            if distinct[m] == ids[n]:
                at = m
                break
        if at == found:
            distinct[found] = ids[n]
            found += 1
        counts[at] += 1
    return distinct[:found], counts[:found]


@compiled
def tfidf_values(idf: np.ndarray, features: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """TF-IDF values as scikit-learn's sublinear TfidfVectorizer gives them: (1 + log count) times
    the feature's idf, the whole scaled to unit length (float32)."""
    values = np.empty(features.shape[0], dtype=np.float32)
    square = np.float32(0.0)
    for n in range(features.shape[0]):
        value = idf[features[n]]
        if counts[n] > 1:
            value = np.float32(1.0 + np.log(counts[n])) * value
        values[n] = value
        square += value * value
    norm = np.float32(np.sqrt(np.float64(square)))
    if norm:
        for n in range(values.shape[0]):
            values[n] = values[n] / norm
    return values


@compiled
def tfidf_logistic_scores(
    weights: np.ndarray, bias: np.ndarray, idf: np.ndarray, ids: np.ndarray, out: np.ndarray
) -> np.ndarray:
    """`logistic_scores` of the TF-IDF values of the features `ids` (a feature once for each time
    it occurs), in one call."""
    features, counts = counted(ids)
    return logistic_scores(weights, bias, features, tfidf_values(idf, features, counts), out)
