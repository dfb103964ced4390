"""Slot extraction: finds parameter values in free text and normalizes them ("o 12345" -> "O-12345")."""

from __future__ import annotations

import re
from typing import Any

from agent.config import SlotSpec
from agent.text import clean
from agent.understanding.politeness import Politeness


class SlotExtractor:
    def __init__(self, slots: dict[str, SlotSpec]):
        self.specs = slots
        self._patterns = {n: re.compile(s.pattern, re.I) for n, s in slots.items() if s.pattern}
        self._reply = {n: re.compile(s.reply_pattern, re.I) for n, s in slots.items() if s.reply_pattern}
        self._values = {
            # Longest first so "desk chair" wins over "chair"; a plural ("laptops") finds the value too.
            n: re.compile(
                r"\b(" + "|".join(re.escape(v) for v in sorted(s.values, key=len, reverse=True)) + r")(?:s|es)?\b", re.I
            )
            for n, s in slots.items()
            if s.values
        }

    def _normalize(self, name: str, match: re.Match[str]) -> str:
        spec = self.specs[name]
        groups = [g for g in match.groups() if g is not None] or [match.group(0)]
        value = spec.format.format(*[g.strip() for g in groups])
        return value.upper() if spec.upper else value

    def extract(self, text: str) -> tuple[dict[str, Any], str]:
        """Values found anywhere in the text, and the text with those spans blanked out."""
        text = clean(text)
        found: dict[str, Any] = {}
        rest = text
        for name, rx in self._patterns.items():
            m = rx.search(text)
            if m:
                found[name] = self._normalize(name, m)
                if not self.specs[name].keep_words:
                    rest = rest.replace(m.group(0), " ")
        for name, rx in self._values.items():
            m = rx.search(text)
            if m and name not in found:
                canonical = {v.lower(): v for v in self.specs[name].values}
                found[name] = canonical[m.group(1).lower()]
        return found, rest

    def typed_reply(self, name: str, text: str) -> tuple[Any, str] | None:
        """The value of `name` a direct answer gives by its pattern ("O-12345", a make and model),
        and what the message says besides it."""
        text = clean(text)
        for rx in (self._patterns.get(name), self._reply.get(name)):
            if rx is not None and (m := rx.search(text)):
                return self._normalize(name, m), f"{text[: m.start()]} {text[m.end() :]}".strip()
        return None

    def direct_answer(self, name: str, text: str, politeness: Politeness) -> Any | None:
        """A message that is nothing but a value of `name`'s kind answers the question asking for
        it, whatever else it resembles ("O-12345" to "which order?", a make and model to "which
        device?")."""
        found = self.typed_reply(name, text)
        if found is None:
            return None
        value, rest = found
        # Little words around it ("a", "it's the", "my") say nothing else; "cancel O-12345" does.
        words = re.findall(r"[\w']+", politeness.core(rest))
        return value if len(words) <= 2 and all(len(w) <= 4 for w in words) else None

    def extract_reply(self, name: str, text: str, *, free_text: bool = True) -> Any | None:
        """The value of `name` in a direct answer to the question asking for it."""
        text = clean(text)
        spec = self.specs.get(name)
        if spec is None or not text:
            return None
        rx = self._reply.get(name)
        if rx and (m := rx.search(text)):
            return self._normalize(name, m)
        if spec.free_text and free_text:
            return text
        return None
