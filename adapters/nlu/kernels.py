"""The scorers' loops over the banks, compiled: in C when the package was installed (native.c),
else by numba at the first call (jitted.py), with the same names, arguments and results to the bit.

numba brings LLVM, about 130 MB in every process that imports it, so it is imported only where the
C module was not built (no C compiler at install time).
"""

from __future__ import annotations

try:
    from adapters.nlu import native as loops

    COMPILED_BY = "c"
except ImportError:  # pragma: no cover - installed without a C compiler
    from adapters.nlu import jitted as loops  # type: ignore[no-redef]

    COMPILED_BY = "numba"

__all__ = ["COMPILED_BY", "loops"]
