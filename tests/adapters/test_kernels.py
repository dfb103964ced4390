"""The compiled loops: C (native.c) and numba (jitted.py) give the same results to the bit; the C
module refuses a wrong call instead of reading outside an array; a process that reads messages
imports neither numba nor the wordllama package."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from adapters.nlu import jitted, kernels
from adapters.nlu.jitted import compiled
from tests.helpers import CAN_COMPILE, REPO

try:
    from adapters.nlu import native
except ImportError:  # pragma: no cover - installed without a C compiler
    native = None
# Where the install could compile native.c, these tests hold it to numba's results; only without a
# compiler do they give way (the scorers then run numba's loops).
pytestmark = pytest.mark.skipif(native is None and not CAN_COMPILE, reason="no C compiler: native.c was not compiled")

SENTENCES, WIDTH, ROWS, TOKENS = 517, 128, 64, 300


def word_vector_inputs(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((TOKENS, WIDTH)).astype(np.float32)
    slab = rng.integers(-32767, 32768, (ROWS, SENTENCES)).astype(np.int16)
    scale = (rng.random(ROWS) / 32767).astype(np.float32)
    count = int(rng.integers(1, 40))
    ids = rng.choice(TOKENS, count, replace=True).astype(np.intp)
    row_of = np.full(TOKENS, -1, dtype=np.intp)
    distinct = np.unique(ids)
    row_of[distinct] = rng.choice(ROWS, len(distinct), replace=False)
    sizes = rng.integers(1, 9, 200)
    sizes = sizes[np.cumsum(sizes) <= SENTENCES].astype(np.intp)
    sizes[-1] += SENTENCES - sizes.sum()
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
    return dict(ids=ids, table=table, row_of=row_of, slab=slab, scale=scale, starts=starts, sizes=sizes)


@pytest.mark.parametrize("seed", range(40))
def test_the_word_vector_loops_are_the_same_in_c_and_numba(seed: int) -> None:
    a = word_vector_inputs(seed)
    columns = a["ids"], a["table"], a["row_of"], a["slab"], a["scale"]
    results = []
    for module in (native, jitted):
        similarities = module.token_similarities(*columns, np.empty(SENTENCES, np.float32))
        total = np.arange(len(a["sizes"]), dtype=np.float64) / 7
        for two in (True, False):
            module.token_scores(*columns, a["starts"], a["sizes"], two, np.empty(SENTENCES, np.float32), 2, total)
            module.best_of_runs(similarities, np.float32(1.0), a["starts"], a["sizes"], two, 3, total)
            module.best_of_runs(similarities, np.float32(0.7), a["starts"], a["sizes"], two, 1, total)
        results.append((similarities.tobytes(), total.tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize("seed", range(20))
def test_the_column_keeping_loops_are_the_same_in_c_and_numba(seed: int) -> None:
    rng = np.random.default_rng(seed)
    column = (rng.standard_normal(SENTENCES) * rng.random()).astype(np.float32)
    ids = rng.integers(0, TOKENS, 30).astype(np.intp)
    row_of = np.where(rng.random(TOKENS) < 0.3, rng.integers(0, ROWS, TOKENS), -1).astype(np.intp)
    stamp = rng.integers(0, 1000, ROWS).astype(np.intp)
    outputs = []
    for module in (native, jitted):
        slab, scale = np.zeros((ROWS, SENTENCES), np.int16), np.zeros(ROWS, np.float32)
        module.store_column(column, slab, scale, 5)
        module.store_column(np.zeros(SENTENCES, np.float32), slab, scale, 6)  # all zeros: scale 1
        marked, missing = stamp.copy(), np.full(len(ids), -7, dtype=np.intp)
        found = module.kept_columns(ids, row_of, marked, 1001, missing)
        rows = module.least_used(marked, 5, np.empty(5, dtype=np.intp))
        outputs.append((slab.tobytes(), scale.tobytes(), found, missing.tobytes(), marked.tobytes(), rows.tobytes()))
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("seed", range(20))
def test_the_lexical_loops_are_the_same_in_c_and_numba(seed: int) -> None:
    rng = np.random.default_rng(seed)
    features, labels = 500, 37
    weights = rng.standard_normal((features, labels)).astype(np.float32)
    bias = rng.standard_normal(labels).astype(np.float32)
    idf = (1 + rng.random(features) * 5).astype(np.float32)
    ids = rng.integers(0, 60, int(rng.integers(0, 30))).astype(np.intp)  # repeats: counts above one
    outputs = []
    for module in (native, jitted):
        total = np.zeros(labels)
        module.tfidf_logistic_scores(weights, bias, idf, ids, 2, total)
        distinct, counts = np.empty_like(ids), np.empty_like(ids)
        found = module.counted(ids, distinct, counts)
        values = module.tfidf_values(idf, distinct[:found], counts[:found], np.empty(found, np.float32))
        outputs.append((total.tobytes(), distinct[:found].tobytes(), counts[:found].tobytes(), values.tobytes()))
    assert outputs[0] == outputs[1]


def test_a_wrong_call_raises_and_writes_nothing() -> None:
    a = word_vector_inputs(0)
    total = np.zeros(len(a["sizes"]))
    sims = np.empty(SENTENCES, np.float32)
    args = [a["ids"], a["table"], a["row_of"], a["slab"], a["scale"], a["starts"], a["sizes"], True, sims, 2, total]
    wrong_type = list(args)
    wrong_type[1] = a["table"].astype(np.float64)
    with pytest.raises(TypeError, match="table must be a 2-dimensional float32 array"):
        native.token_scores(*wrong_type)
    bad_id = list(args)
    bad_id[0] = np.array([TOKENS + 5], dtype=np.intp)
    with pytest.raises(IndexError, match="an id is out of range"):
        native.token_scores(*bad_id)
    not_kept = list(args)
    not_kept[2] = np.full(TOKENS, -1, dtype=np.intp)
    with pytest.raises(IndexError, match="kept column"):
        native.token_scores(*not_kept)
    long_run = list(args)
    long_run[6] = a["sizes"] + 1
    with pytest.raises(IndexError, match="a run is out of range"):
        native.token_scores(*long_run)
    with pytest.raises(ValueError, match="not writable|read-only"):
        frozen = total.copy()
        frozen.flags.writeable = False
        native.token_scores(*args[:10], frozen)
    with pytest.raises(TypeError, match="takes 11 arguments"):
        native.token_scores(*args[:5])
    assert not total.any()  # nothing was added by a refused call
    with pytest.raises(IndexError, match="a feature is out of range"):
        native.tfidf_logistic_scores(
            np.zeros((4, 3), np.float32), np.zeros(3, np.float32), np.ones(4, np.float32), np.array([4]), 1, total[:3]
        )


def test_the_scorers_use_the_c_loops_and_a_reading_process_imports_neither_numba_nor_wordllama() -> None:
    # numba brings LLVM (about 130 MB resident) and the wordllama package an HTTP client and
    # clustering code; the model's two files are all the reader needs.
    assert kernels.COMPILED_BY == "c"
    script = (
        "import sys\n"
        "from bots.cli.nlu import reader_for\n"
        "reader, _ = reader_for()\n"
        "assert reader.read('where is O-12345?').intent == 'order_status'\n"
        "print(sorted(m for m in ('numba', 'llvmlite', 'wordllama') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_loop_with_nowhere_to_keep_its_machine_code_is_compiled_all_the_same() -> None:
    # A function whose source file does not exist has no cache folder: numba refuses to cache it.
    namespace: dict = {}
    exec("def total(values):\n    s = 0.0\n    for v in values:\n        s += v\n    return s\n", namespace)
    total = compiled(namespace["total"])
    assert total(np.arange(5, dtype=np.float64)) == 10.0
    assert total.__class__.__name__ == "CPUDispatcher"  # compiled, not the Python function
