"""The compiled loops: the same results where numba has no folder to keep their machine code."""

from __future__ import annotations

import numpy as np

from adapters.nlu.kernels import compiled


def test_a_loop_with_nowhere_to_keep_its_machine_code_is_compiled_all_the_same() -> None:
    # A function whose source file does not exist has no cache folder: numba refuses to cache it.
    namespace: dict = {}
    exec("def total(values):\n    s = 0.0\n    for v in values:\n        s += v\n    return s\n", namespace)
    total = compiled(namespace["total"])
    assert total(np.arange(5, dtype=np.float64)) == 10.0
    assert total.__class__.__name__ == "CPUDispatcher"  # compiled, not the Python function
