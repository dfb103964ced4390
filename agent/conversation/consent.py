"""Consent: reading a clear, standalone yes or no from a message.

A confirmation runs money-moving or destructive actions, so only a reply made of nothing but
assent (or refusal) counts: "yep", "go ahead, thanks", "nope", "hold on". A yes that carries
anything else ("sure, but where's O-12345 first?", "yes, just $15 of it") is a new request or a
change, never a confirmation. The words live in config/intents.yaml (`vocabulary.yes`, `.no`,
`.courtesy`), so a team adds its own ways of saying yes without touching code.
"""

from __future__ import annotations

import re

from agent.config import Vocabulary
from agent.text import Answer, clean

_WORDS = re.compile(r"[a-z']+")
_LONGEST = 4  # words in the longest phrase matched


def _phrases(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(_WORDS.findall(w.lower())) for w in words if _WORDS.findall(w.lower())}


class Consent:
    """`consent(text)` -> "yes", "no", or None when the message is anything more than an answer."""

    def __init__(self, vocabulary: Vocabulary):
        self.yes = _phrases(vocabulary.yes)
        self.no = _phrases(vocabulary.no)
        self.courtesy = _phrases(vocabulary.courtesy)
        self.change = _phrases(vocabulary.change)

    def changes(self, text: str) -> bool:
        """Whether the message says it changes something ("instead", "the other one", "make it")."""
        words = tuple(_WORDS.findall(clean(text).lower()))
        return any(words[i : i + len(p)] == p for p in self.change for i in range(len(words) - len(p) + 1))

    def __call__(self, text: str) -> Answer | None:
        text = clean(text).lower()
        # Digits or a question mark mean the message asks or changes something ("yes, $15").
        if not text or any(c.isdigit() for c in text) or "?" in text:
            return None
        # Anything besides words, spaces and light punctuation (a link, an ID, a code) is not an answer.
        if re.search(r"[^a-z'\s.,!:;\-]", text.encode("ascii", "ignore").decode()):
            return None
        words = _WORDS.findall(text)
        said: set[Answer] = set()
        i = 0
        while i < len(words):
            for n in range(min(_LONGEST, len(words) - i), 0, -1):
                chunk = tuple(words[i : i + n])
                if chunk in self.no:
                    said.add("no")
                elif chunk in self.yes:
                    said.add("yes")
                elif chunk not in self.courtesy:
                    continue
                i += n
                break
            else:
                return None  # a word that is neither assent, refusal nor courtesy
        return said.pop() if len(said) == 1 else None
