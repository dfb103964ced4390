"""The word-vector model's tokenizer read from kept arrays gives Hugging Face's tokenizer's ids."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from adapters.nlu import pieces, wordllama
from adapters.nlu.pieces import Pieces
from tests.helpers import REPO

CORPORA = ("tests/nlu/corpus.jsonl", "tests/nlu/phrasing_classes.jsonl")
# Special tokens inside words, spaces doubled and at the ends, characters the vocabulary has only as
# bytes, the tokenizer's own "▁", and a token written out ("<0x41>" is text, not the byte).
EDGES = [
    "",
    " ",
    "  a",
    "a  b ",
    "<s>",
    "a<s>b",
    "</s><unk>x",
    "<unk>",
    "\u2581",
    "\u2581\u2581x",
    "héllo",
    "日本語",
    "😀👍🏽",
    "\t\n",
    "O-12345",
    "aaaaaaa",
    "ﬁ",
    "x\u0301",
    "a\u200bb",
    "<0x41>",
    "late!!",
    "don't",
    "re-ship",
]


@pytest.fixture(scope="module")
def both() -> tuple[Tokenizer, Pieces]:
    config = wordllama._shipped_files()[0]
    return Tokenizer.from_file(str(config)), Pieces(pieces.kept_arrays(config))


def texts() -> list[str]:
    found: set[str] = set()
    for name in CORPORA:
        for line in (REPO / name).read_text(encoding="utf-8").splitlines():
            text = json.loads(line)["text"]
            found |= {text, text.lower(), *text.split(" "), *text.lower().split(" ")}
    for name in (REPO / "config").rglob("*.yaml"):
        found |= set(name.read_text(encoding="utf-8").split())
    return sorted(found)


def test_the_banks_and_corpora_read_as_the_tokenizer_reads_them(both: tuple[Tokenizer, Pieces]) -> None:
    tokenizer, kept = both
    for text in [*EDGES, *texts()]:
        assert kept.encode(text) == tokenizer.encode(text, add_special_tokens=False).ids, text


def test_random_strings_read_as_the_tokenizer_reads_them(both: tuple[Tokenizer, Pieces]) -> None:
    tokenizer, kept = both
    rnd = random.Random(0)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCé日😀 -.,!?'<>/s\u25810123456789"
    for _ in range(2000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 14)))
        assert kept.encode(text) == tokenizer.encode(text, add_special_tokens=False).ids, text


def test_a_tokenizer_of_another_kind_is_refused(tmp_path: Path) -> None:
    config = json.loads(wordllama._shipped_files()[0].read_text(encoding="utf-8"))
    config["pre_tokenizer"] = {"type": "Whitespace"}
    other = tmp_path / "tokenizer.json"
    other.write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ValueError, match="not the byte-pair encoding"):
        pieces.kept_arrays(other)
