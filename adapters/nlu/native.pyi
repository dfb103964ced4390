# The C module compiled from native.c: the same loops, arguments and results as jitted.py's.
import numpy as np

def kept_columns(ids: np.ndarray, row_of: np.ndarray, stamp: np.ndarray, clock: int, missing: np.ndarray) -> int: ...
def token_similarities(
    ids: np.ndarray, table: np.ndarray, row_of: np.ndarray, slab: np.ndarray, scale: np.ndarray, out: np.ndarray
) -> np.ndarray: ...
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
) -> None: ...
def best_of_runs(
    sims: np.ndarray,
    norm: float | np.floating,
    starts: np.ndarray,
    sizes: np.ndarray,
    two: bool,
    parts: int,
    total: np.ndarray,
) -> None: ...
def least_used(stamp: np.ndarray, count: int, rows: np.ndarray) -> np.ndarray: ...
def store_column(column: np.ndarray, slab: np.ndarray, scale: np.ndarray, row: int) -> None: ...
def counted(ids: np.ndarray, distinct: np.ndarray, counts: np.ndarray) -> int: ...
def tfidf_values(idf: np.ndarray, features: np.ndarray, counts: np.ndarray, out: np.ndarray) -> np.ndarray: ...
def tfidf_logistic_scores(
    weights: np.ndarray, bias: np.ndarray, idf: np.ndarray, ids: np.ndarray, parts: int, total: np.ndarray
) -> None: ...
