"""The word-vector model's tokenizer, read from arrays kept beside its table.

wordllama's tokenizer is a byte-pair encoding (its `tokenizer_config.json`, in the Hugging Face
`tokenizers` format): a text is split at the special tokens, each other part gets "▁" in front and
"▁" for its spaces, starts as its characters (a character the vocabulary lacks as its UTF-8
bytes, `<0x..>`), and its adjacent pair with the lowest merge rank is merged until none is left.
Hugging Face's `Tokenizer` keeps that vocabulary and its merges as hash maps of strings: about
12 MB of every process, for a step that reads a new word once. Here the merges are three arrays
in the model's cache folder, memory-mapped like the table (one copy per machine), and a word's
pieces come out the same: tests/adapters/test_pieces.py compares the two on the banks' and the
evaluation corpora's words.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
from pathlib import Path

import numpy as np

SPACE = "\u2581"  # the tokenizer's "▁"
_NONE = (2**31, -1)  # the rank and id of a pair that does not merge
NAMES = ("merge_pairs", "merge_ranks", "merge_ids", "chars", "char_ids", "byte_ids", "specials", "special_ids")


def vocabulary(config: Path) -> dict[str, int]:
    """The tokenizer's tokens with their ids, special ones too (as `Tokenizer.get_vocab` gives them)."""
    spec = json.loads(config.read_text(encoding="utf-8"))
    return {**spec["model"]["vocab"], **{t["content"]: t["id"] for t in spec.get("added_tokens", [])}}


def kept_arrays(config: Path) -> dict[str, np.ndarray]:
    """The arrays `Pieces` reads, from a tokenizer config file; the merges sorted by their pair of
    ids (left << 32 | right), so a pair is found by a binary search."""
    spec = json.loads(config.read_text(encoding="utf-8"))
    model = spec["model"]
    normalizers = spec["normalizer"]["normalizers"] if spec.get("normalizer") else []
    expected = [
        {"type": "Prepend", "prepend": SPACE},
        {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
    ]
    if model["type"] != "BPE" or normalizers != expected or spec.get("pre_tokenizer") is not None:
        raise ValueError(f"{config.name}: not the byte-pair encoding this reader implements")
    if model.get("dropout") or model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
        raise ValueError(f"{config.name}: dropout and word affixes are not implemented")
    vocab: dict[str, int] = model["vocab"]
    byte_ids = [vocab.get(f"<0x{b:02X}>") for b in range(256)]
    if not model.get("byte_fallback") or None in byte_ids or model.get("ignore_merges"):
        raise ValueError(f"{config.name}: every byte must have a token (byte fallback), and merges apply")
    merges: dict[int, tuple[int, int]] = {}
    for rank, merge in enumerate(model["merges"]):
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        merges[vocab[left] << 32 | vocab[right]] = (rank, vocab[left + right])  # a later one replaces, as there
    pairs = np.array(sorted(merges), dtype=np.int64)
    chars = sorted(token for token in vocab if len(token) == 1)
    specials = sorted((t["content"], t["id"]) for t in spec.get("added_tokens", []) if t.get("special"))
    return {
        "merge_pairs": pairs,
        "merge_ranks": np.array([merges[p][0] for p in pairs.tolist()], dtype=np.int32),
        "merge_ids": np.array([merges[p][1] for p in pairs.tolist()], dtype=np.int32),
        "chars": np.array(chars),
        "char_ids": np.array([vocab[c] for c in chars], dtype=np.int32),
        "byte_ids": np.array(byte_ids, dtype=np.int32),
        "specials": np.array([content for content, _ in specials]),
        "special_ids": np.array([n for _, n in specials], dtype=np.int32),
    }


class Pieces:
    """A text's token ids, as the tokenizer the arrays were kept from gives them.

    Args:
        arrays: `kept_arrays` of the tokenizer's config (memory-mapped from the cache folder).
    """

    def __init__(self, arrays: dict[str, np.ndarray]):
        # As memoryviews of the (memory-mapped) arrays: their items are Python ints, read without a
        # numpy call each.
        self._pairs = np.ascontiguousarray(arrays["merge_pairs"], dtype=np.int64).data
        self._ranks = np.ascontiguousarray(arrays["merge_ranks"], dtype=np.int32).data
        self._ids = np.ascontiguousarray(arrays["merge_ids"], dtype=np.int32).data
        self._chars = dict(zip(arrays["chars"].tolist(), arrays["char_ids"].tolist(), strict=True))
        self._bytes: list[int] = arrays["byte_ids"].tolist()
        self._specials = dict(zip(arrays["specials"].tolist(), arrays["special_ids"].tolist(), strict=True))
        # Special tokens are taken out of the text as written, before anything else.
        self._split = re.compile("(" + "|".join(map(re.escape, self._specials)) + ")") if self._specials else None

    def encode(self, text: str) -> list[int]:
        parts = self._split.split(text) if self._split is not None else [text]
        ids: list[int] = []
        for part in parts:
            special = self._specials.get(part)
            if special is not None:
                ids.append(special)
            elif part:
                ids += self._merged(self._symbols(SPACE + part.replace(" ", SPACE)))
        return ids

    def _symbols(self, word: str) -> list[int]:
        symbols: list[int] = []
        for char in word:
            known = self._chars.get(char)
            if known is not None:
                symbols.append(known)
            else:
                symbols += [self._bytes[b] for b in char.encode("utf-8")]
        return symbols

    def _merged(self, symbols: list[int]) -> list[int]:
        """The adjacent pair of lowest rank merged, the leftmost of equal ones, until none merges."""
        met: dict[tuple[int, int], tuple[int, int]] = {}  # each pair is looked up once a word
        while len(symbols) > 1:
            best, at = _NONE, -1
            for i, pair in enumerate(itertools.pairwise(symbols)):
                merge = met.get(pair)
                if merge is None:
                    merge = met[pair] = self._merge(pair)
                if merge[0] < best[0]:  # strictly lower: of equal ranks the leftmost
                    best, at = merge, i
            if at < 0:
                break
            symbols[at : at + 2] = [best[1]]
        return symbols

    def _merge(self, pair: tuple[int, int]) -> tuple[int, int]:
        """The pair's rank and merged id, or _NONE: a binary search of the sorted pairs."""
        key = pair[0] << 32 | pair[1]
        at = bisect.bisect_left(self._pairs, key)
        if at < len(self._pairs) and self._pairs[at] == key:
            return self._ranks[at], self._ids[at]
        return _NONE
