"""Typo repair against the bot's own vocabulary: "tarck my ordr" -> "track my order".

Only words of four letters or more that the vocabulary does not know are touched, and only when a
known word is one deletion, insertion or swap away (symmetric deletes), so valid words outside the
vocabulary are left alone unless they sit next to a known word. A capitalised word inside a
sentence is a name (a place, a brand) and is left as written.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable

from agent.text import Runs

# The words a repair looks at: runs of four letters or more.
_LETTER_RUNS = Runs("[A-Za-z]", shortest=4)


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


class Speller:
    """Repairs one-edit typos toward `vocabulary` (the banks, the intents file, core words).

    Args:
        vocabulary: the words a typo may be repaired to.
        known: other valid words, left as they are.
    """

    def __init__(self, vocabulary: Iterable[str], known: Iterable[str] = ()):
        counts = Counter(w.lower() for w in vocabulary if w.isalpha())
        # Valid words outside the bot's vocabulary (a dictionary) are never "repaired".
        self.known = set(counts) | {w.lower() for w in known}
        self._by_delete: dict[str, str] = {}
        for word, _ in counts.most_common():
            if len(word) < 4:
                continue
            for key in {word} | _deletes(word):
                self._by_delete.setdefault(key, word)
        # Unknown words recur (names, brands, the same typo): each is looked up once.
        self._fixed = functools.lru_cache(maxsize=16384)(self._fix_word)

    def fix_word(self, word: str) -> str:
        return self._fixed(word)

    def _fix_word(self, word: str) -> str:
        low = word.lower()
        if low in self.known:
            return word
        for key in [low, *sorted(_deletes(low))]:
            hit = self._by_delete.get(key)
            if hit is not None and abs(len(hit) - len(low)) <= 1:
                return hit
        return word

    def __call__(self, text: str) -> str:
        known = self.known
        if known.issuperset(map(str.lower, _LETTER_RUNS(text))):
            return text  # every word known (most messages): nothing to repair

        def fixed(m: re.Match[str]) -> str:
            word = m.group(0)
            # A known word stays as it is, a name or not: the name test (a look back) only for the others.
            return word if word.lower() in known or _is_name(text, m) else self.fix_word(word)

        return _LETTER_RUNS.rx.sub(fixed, text)


def _is_name(text: str, m: re.Match[str]) -> bool:
    """A capitalised word inside a sentence names something ("ship to Chiang Mai"): never repaired.
    A shouted word (all capitals) or the first word of a sentence still is."""
    before = text[: m.start()].rstrip()
    return m.group(0).istitle() and bool(before) and before[-1] not in ".!?"


def vocabulary_of(sentences: Iterable[str]) -> list[str]:
    """Every word of `sentences` (the banks', the store's names and the banks' `spelling` words)."""
    words: list[str] = []
    for s in sentences:
        words += re.findall(r"[a-z]+", s.lower())
    return words
