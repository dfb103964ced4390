"""The scorers' loops over the banks, compiled by numba where native.c was not compiled.

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
def token_sum(
    ids: np.ndarray, table: np.ndarray, row_of: np.ndarray, slab: np.ndarray, scale: np.ndarray, out: np.ndarray
) -> np.float32:
    """`out` = the sum of the kept columns of `ids` (`slab` rows times their `scale`), in their
    order; returns the length of their vectors' sum (0 for none: `out` is then zeros)."""
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
        return np.float32(0.0)
    summed_columns(slab, scale, row_of[ids], out)
    return norm


@compiled
def token_similarities(
    ids: np.ndarray, table: np.ndarray, row_of: np.ndarray, slab: np.ndarray, scale: np.ndarray, out: np.ndarray
) -> np.ndarray:
    """`out` = the cosine similarity of the text of `ids` to each bank sentence: `token_sum`
    divided by the length of the tokens' vectors' sum."""
    norm = token_sum(ids, table, row_of, slab, scale, out)
    if norm:
        for j in range(out.shape[0]):
            out[j] = out[j] / norm
    return out


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
    parts: int,
    total: np.ndarray,
) -> None:
    """`best_of_runs` of `token_similarities`, in one call (the division by the length is done as
    each similarity is read)."""
    norm = token_sum(ids, table, row_of, slab, scale, sims)
    best_of_runs(sims, norm if norm else np.float32(1.0), starts, sizes, two, parts, total)


@compiled
def summed_columns(slab: np.ndarray, scale: np.ndarray, rows: np.ndarray, out: np.ndarray) -> np.ndarray:
    """`out` = the sum of `slab`'s `rows`, each times its `scale`, in their order (float32)."""
    first, factor = slab[rows[0]], scale[rows[0]]
    for j in range(out.shape[0]):
        out[j] = factor * np.float32(first[j])
    t = 1
    # Four rows to a pass over `out`, added in the same order as one at a time: `out` is read and
    # written a quarter as often.
    while t + 4 <= rows.shape[0]:
        a, b, c, d = slab[rows[t]], slab[rows[t + 1]], slab[rows[t + 2]], slab[rows[t + 3]]
        fa, fb, fc, fd = scale[rows[t]], scale[rows[t + 1]], scale[rows[t + 2]], scale[rows[t + 3]]
        for j in range(out.shape[0]):
            value = (out[j] + fa * np.float32(a[j])) + fb * np.float32(b[j])
            out[j] = (value + fc * np.float32(c[j])) + fd * np.float32(d[j])
        t += 4
    while t < rows.shape[0]:
        row, factor = slab[rows[t]], scale[rows[t]]
        for j in range(out.shape[0]):
            out[j] += factor * np.float32(row[j])
        t += 1
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
def best_of_runs(
    sims: np.ndarray, norm: np.float32, starts: np.ndarray, sizes: np.ndarray, two: bool, parts: int, total: np.ndarray
) -> None:
    """Adds to `total` (float64) a `parts`th of each run's best of `sims` divided by `norm` (a
    label's sentences), or with `two` of the mean of its best two. The best counts twice where it
    occurs twice or where a run has one sentence."""
    lowest = np.float32(-np.inf)
    for label in range(starts.shape[0]):
        start, end = starts[label], starts[label] + sizes[label]
        # Two independent best-and-second pairs, of the odd and the even positions, merged at the
        # end: each step waits on the one before it in its own pair only. Without branches, which
        # the processor would mispredict: a tie with the best is its second.
        best, second, best2, second2 = sims[start] / norm, lowest, lowest, lowest
        j = start + 1
        while j + 1 < end:
            value, value2 = sims[j] / norm, sims[j + 1] / norm
            second, second2 = max(second, min(best, value)), max(second2, min(best2, value2))
            best, best2 = max(best, value), max(best2, value2)
            j += 2
        if j < end:
            value = sims[j] / norm
            second, best = max(second, min(best, value)), max(best, value)
        second = max(min(best, best2), max(second, second2))
        best = max(best, best2)
        score = best if not two or sizes[label] == 1 else (second + best) / np.float32(2)
        total[label] += np.float64(score) / parts


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
def counted(ids: np.ndarray, distinct: np.ndarray, counts: np.ndarray) -> int:
    """Writes the distinct `ids` into `distinct`, in the order they first occur, and how often each
    occurs into `counts` (a message has a few dozen: one pass over those before it each); returns
    how many are distinct."""
    found = 0
    for n in range(ids.shape[0]):
        at = found
        for m in range(found):
            if distinct[m] == ids[n]:
                at = m
                break
        if at == found:
            distinct[found] = ids[n]
            counts[found] = 0
            found += 1
        counts[at] += 1
    return found


@compiled
def tfidf_values(idf: np.ndarray, features: np.ndarray, counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`values` = TF-IDF values as scikit-learn's sublinear TfidfVectorizer gives them: (1 + log
    count) times the feature's idf, the whole scaled to unit length (float32)."""
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
    weights: np.ndarray, bias: np.ndarray, idf: np.ndarray, ids: np.ndarray, parts: int, total: np.ndarray
) -> None:
    """Adds to `total` (float64) a `parts`th of `logistic_scores` of the TF-IDF values of the
    features `ids` (a feature once for each time it occurs), in one call."""
    distinct, counts = np.empty_like(ids), np.empty_like(ids)
    found = counted(ids, distinct, counts)
    features = distinct[:found]
    values = tfidf_values(idf, features, counts[:found], np.empty(found, np.float32))
    scores = logistic_scores(weights, bias, features, values, np.empty(total.shape[0], np.float32))
    for label in range(total.shape[0]):
        total[label] += np.float64(scores[label]) / parts
