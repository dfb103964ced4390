"""The word-vector scorer's arithmetic against the plain definition of its scores."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from adapters.nlu import wordllama
from adapters.nlu.wordllama import WordLlamaScorer
from tests.helpers import REPO

EXAMPLES = [
    ("order_status", "where is my order"),
    ("order_status", "has my parcel shipped yet"),
    ("order_status", "track my package"),
    ("refund_request", "i want my money back"),
    ("refund_request", "please refund this purchase"),
    ("greeting", "hello there"),
]
MESSAGES = ["where is my parcel", "money back please", "hi", "zzzz qqqq", "refund refund refund"]
# Many new tokens at once.
LONG = (
    "please tell me where my parcel and the refund money went since last tuesday, and why nobody from "
    "your support team wrote back about the broken headphones"
)


def assert_scores_are_the_definition(scorer: WordLlamaScorer, text: str, top_k: int) -> None:
    """Each label's score is the mean of its top_k closest sentences' cosine similarities (to within
    the kept columns' 16-bit rounding: each token's column within 1/65,534 of its largest value)."""
    sims = scorer.similarities(text)
    expected = []
    for label in scorer.labels:
        mine = [s for (lb, _), s in zip(EXAMPLES, sims, strict=True) if lb == label]
        mine += [mine[0]] * (top_k - len(mine))  # fewer sentences than top_k: the first counts again
        expected.append(float(np.mean(sorted(mine, reverse=True)[:top_k])))
    assert scorer.scores(text) == pytest.approx(dict(zip(scorer.labels, expected, strict=True)), abs=2e-5)


@pytest.mark.parametrize("top_k", [1, 2, 3])
def test_scores_are_the_mean_of_each_labels_closest_sentences(top_k: int) -> None:
    scorer = WordLlamaScorer(dimensions=128, top_k=top_k)
    scorer.fit(EXAMPLES)
    for text in [*MESSAGES, LONG] * 2:  # the second time from the kept token columns
        assert_scores_are_the_definition(scorer, text, top_k)


def test_columns_given_up_for_new_tokens_leave_every_score_right(monkeypatch: pytest.MonkeyPatch) -> None:
    # A slab of six columns: the messages' tokens take more, so older columns are given up and
    # their rows reused; a message with more distinct tokens than that reads the whole bank.
    monkeypatch.setattr(wordllama, "COLUMNS", 6)
    scorer = WordLlamaScorer(dimensions=128, top_k=2)
    scorer.fit(EXAMPLES)
    for text in [*MESSAGES, LONG, *reversed(MESSAGES), LONG]:
        assert_scores_are_the_definition(scorer, text, 2)
        assert len(scorer._rows) <= 6


def test_a_message_without_tokens_scores_zero() -> None:
    scorer = WordLlamaScorer()
    scorer.fit(EXAMPLES)
    assert set(scorer.scores("").values()) == {0.0}


def test_missing_model_files_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wordllama, "_WEIGHTS", "weights/not_shipped.safetensors")
    with pytest.raises(RuntimeError, match=r"model files of wordllama 0\.4: pip install 'wordllama"):
        WordLlamaScorer()


def reference_scores(table: np.ndarray, ids: list[int], bank: list[tuple[str, list[int]]], top_k: int) -> dict:
    """Each label's score by the definition, in float64 and plain loops: a text is the sum of its
    tokens' rows, similarity is the cosine, and a label scores the mean of its top_k similarities
    (a label with fewer sentences counts its first again)."""

    def vector(tokens: list[int]) -> np.ndarray:
        return sum((table[t].astype(np.float64) for t in tokens), np.zeros(table.shape[1]))

    def cosine(a: np.ndarray, b: np.ndarray) -> float:
        norms = float(np.sqrt(a @ a) * np.sqrt(b @ b))
        return float(a @ b) / norms if norms else 0.0

    message = vector(ids)
    by_label: dict[str, list[float]] = {}
    for label, tokens in bank:
        by_label.setdefault(label, []).append(cosine(message, vector(tokens)))
    scores = {}
    for label, sims in by_label.items():
        sims = sims + [sims[0]] * (top_k - len(sims))
        scores[label] = sum(sorted(sims, reverse=True)[:top_k]) / top_k
    return scores


@pytest.mark.parametrize("seed", range(12))
def test_scores_on_a_random_table_and_bank_are_the_definitions(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # A random table in place of the model's, random sentences of real words, labels of one to
    # seven sentences (some sentences twice, so a label's best occurs twice), and a slab of a few
    # columns, so that columns are given up, kept again, and a long message reads the whole bank.
    rng = np.random.default_rng(seed)
    shipped = wordllama._table
    tokenizer, weights = wordllama._shipped_files()
    kept = shipped(weights, 128, tokenizer)
    table = rng.standard_normal(kept["table"].shape).astype(np.float32)
    monkeypatch.setattr(wordllama, "_table", lambda *_: {**kept, "table": table})
    monkeypatch.setattr(wordllama, "COLUMNS", int(rng.integers(4, 40)))
    top_k = int(rng.integers(1, 4))
    scorer = WordLlamaScorer(dimensions=128, top_k=top_k)
    vocabulary = sorted(scorer.words())

    def sentence() -> str:
        return " ".join(rng.choice(vocabulary, int(rng.integers(1, 9))))

    examples = []
    for n in range(int(rng.integers(2, 12))):
        sentences = [sentence() for _ in range(int(rng.integers(1, 8)))]
        if len(sentences) > 2 and rng.random() < 0.5:
            sentences[-1] = sentences[0]
        examples += [(f"label-{n}", s) for s in sentences]
    rng.shuffle(examples)
    scorer.fit(examples)
    bank = [(label, scorer.ids(text)) for label, text in examples]
    for _ in range(15):
        text = sentence() if rng.random() < 0.8 else " ".join(sentence() for _ in range(12))
        expected = reference_scores(table, scorer.ids(text), bank, top_k)
        # Within the kept columns' 16-bit rounding.
        assert scorer.scores(text) == pytest.approx(expected, abs=1e-4)
        total = np.full(len(scorer.labels), 0.5)
        scorer.add_to(text, total, 4)
        assert total.tolist() == pytest.approx([0.5 + expected[label] / 4 for label in scorer.labels], abs=1e-4)


def test_a_reading_process_imports_neither_the_wordllama_package_nor_a_tokenizer() -> None:
    # wordllama brings an HTTP client, pydantic models and compiled clustering code, and Hugging
    # Face's tokenizer 12 MB of hash maps; the model's arrays are all the reader needs.
    script = (
        "import sys\n"
        "from bots.cli.nlu import reader_for\n"
        "reader, _ = reader_for()\n"
        "assert reader.read('where is O-12345?').intent == 'order_status'\n"
        "print('wordllama' in sys.modules, 'tokenizers' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False False"


def test_a_cached_model_reads_the_same_scores_from_files_every_worker_maps(tmp_path: Path) -> None:
    plain = WordLlamaScorer()
    plain.fit(EXAMPLES)
    WordLlamaScorer(cache=tmp_path).fit(EXAMPLES)  # the first start writes the arrays
    kept = WordLlamaScorer(cache=tmp_path)
    kept.fit(EXAMPLES)
    for text in [*MESSAGES, LONG]:
        assert kept.scores(text) == plain.scores(text)
        assert kept.similarities(text) == plain.similarities(text)
    assert kept.words() == plain.words()
    # Read from the files, not copied: the table and the bank's vectors are the page cache's pages.
    maps = Path("/proc/self/maps").read_text()
    assert not kept.table.flags.writeable and not kept._by_label.flags.writeable
    assert sum(str(tmp_path) in line for line in maps.splitlines()) >= 2


def test_banks_changed_by_a_label_are_embedded_again(tmp_path: Path) -> None:
    WordLlamaScorer(cache=tmp_path).fit(EXAMPLES)
    labelled = [*EXAMPLES, ("greeting", "good morning to you")]
    kept = WordLlamaScorer(cache=tmp_path)
    kept.fit(labelled)
    plain = WordLlamaScorer()
    plain.fit(labelled)
    assert kept.scores("good morning") == plain.scores("good morning")
    assert len(list(tmp_path.glob("wordllama-*"))) == 3  # the table, and the vectors of each bank


def test_added_sentences_score_as_if_fitted_with_them() -> None:
    added = [("greeting", "hiya, how are things"), ("refund", "send the money back for the broken kettle")]
    learned, fitted = WordLlamaScorer(), WordLlamaScorer()
    learned.fit(EXAMPLES)
    learned.add(added)
    fitted.fit([*EXAMPLES, *added])
    for text in ["hiya there", "money back for the kettle", "where is my order"]:
        assert learned.scores(text) == pytest.approx(fitted.scores(text))
