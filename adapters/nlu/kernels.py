"""The scorers' loops over the banks, compiled: in C when the package was installed (native.c),
else by numba at the first call (jitted.py), with the same results to the bit.

numba brings LLVM, about 130 MB in every process that imports it, so it is imported only where the
C module was not built (no C compiler at install time).
"""

from __future__ import annotations

try:
    from adapters.nlu.native import (
        best_of_runs,
        counted,
        kept_columns,
        least_used,
        store_column,
        tfidf_logistic_scores,
        tfidf_values,
        token_scores,
        token_similarities,
    )

    COMPILED_BY = "c"
except ImportError:  # pragma: no cover - installed without a C compiler
    from adapters.nlu.jitted import (  # noqa: F401 - the same names, compiled by numba
        best_of_runs,
        counted,
        kept_columns,
        least_used,
        store_column,
        tfidf_logistic_scores,
        tfidf_values,
        token_scores,
        token_similarities,
    )

    COMPILED_BY = "numba"

__all__ = [
    "COMPILED_BY",
    "best_of_runs",
    "counted",
    "kept_columns",
    "least_used",
    "store_column",
    "tfidf_logistic_scores",
    "tfidf_values",
    "token_scores",
    "token_similarities",
]
