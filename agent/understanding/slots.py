"""Slot extraction: finds parameter values in free text and normalizes them ("o 12345" -> "O-12345")."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from agent.config.schema import ANY, SlotSpec
from agent.text import STOPWORDS, clean, word_runs
from agent.understanding.politeness import Politeness
from agent.understanding.required import ANY_DIGIT, Needed, required, surest

_DIGIT = re.compile(r"\d")


class _Check:
    """One set of pieces a text must hold one of (see `agent.understanding.required`)."""

    __slots__ = ("digit_only", "digit_too", "lower", "rx")

    def __init__(self, needed: Needed):
        self.digit_only = needed == {ANY_DIGIT}
        self.digit_too = ANY_DIGIT in needed
        pieces = sorted(v for kind, v in needed if kind == "text")
        # An ASCII text's lowercase holds a piece exactly when the pattern's case-insensitive
        # search would see it, and `in` is far quicker than an alternation; other texts use the
        # alternation (re's case folding equates a few non-ASCII letters with ASCII ones). A piece
        # with a character outside ASCII that has no case ("€") is never in an ASCII text.
        caseless = all(v.isascii() or all(ch.isascii() or ch.lower() == ch.upper() == ch for ch in v) for v in pieces)
        self.lower = tuple(v.lower() for v in pieces if v.isascii()) if caseless else None
        self.rx = re.compile("|".join(sorted(r"\d" if kind == "digit" else re.escape(v) for kind, v in needed)), re.I)

    def holds(self, text: str, facts: TextFacts) -> bool:
        if self.digit_too and facts.has_digit:
            return True
        if self.digit_only:
            return False
        if facts.lower is not None and self.lower is not None:
            return any(map(facts.lower.__contains__, self.lower))
        return self.rx.search(text) is not None


class Pattern:
    """A compiled pattern that skips a text lacking what every match needs.

    Most patterns cannot match without a digit, a keyword or a quote, and most messages have none
    of them; checking for those pieces first is much cheaper than the pattern's own search, which
    tries every position. A message with a digit is checked for the pattern's other pieces too
    ("invoice", a dot between digits). `search` finds what `re.compile(pattern, re.I).search` finds.
    """

    def __init__(self, pattern: str):
        self.rx = re.compile(pattern, re.I)
        self.groups = self.rx.groups
        needs = required(pattern)
        # The surest set first; then the rest, for a text that holds it.
        first = [surest(needs)] if needs else []
        self._checks = tuple(_Check(n) for n in first + [n for n in needs if n not in first])
        self.needs_digit = any(check.digit_only for check in self._checks)

    def search(self, text: str, facts: TextFacts | None = None) -> re.Match[str] | None:
        """The pattern's first match; `facts` are the text's, when already known, and keep what
        this pattern found in it (a message is read by several readers: a mask, then the slots).
        The pattern itself keeps nothing: it is shared by every turn."""
        if facts is not None and self in facts.found:
            return facts.found[self]
        found = self.rx.search(text) if self.may_match(text, facts) else None
        if facts is not None:
            facts.found[self] = found
        return found

    def may_match(self, text: str, facts: TextFacts | None = None) -> bool:
        """False only when the text lacks something every match needs."""
        if self._checks:
            facts = facts or TextFacts(text)
            for check in self._checks:
                if not check.holds(text, facts):
                    return False
        return True


@functools.lru_cache(maxsize=1024)
def pattern(text: str) -> Pattern:
    """The one `Pattern` of `text` in this process: a slot's pattern that also masks its value
    for the model (intents.yaml `mask`) is searched in the same message by both, and the second
    search answers from the first's."""
    return Pattern(text)


class TextFacts:
    """What `Pattern.search` checks of a text, found once for all the patterns searched in it."""

    __slots__ = ("found", "has_digit", "lower", "_words")

    def __init__(self, text: str):
        self.has_digit = _DIGIT.search(text) is not None
        self.lower = text.lower() if text.isascii() else None
        self._words: frozenset[str] | None = None
        self.found: dict[Pattern, re.Match[str] | None] = {}  # each pattern's search of this text

    @property
    def words(self) -> frozenset[str] | None:
        """An ASCII text's words in lower case (runs of word characters); None for other texts."""
        if self._words is None and self.lower is not None:
            self._words = frozenset(word_runs(self.lower))
        return self._words


def _leading_words(values: Iterable[str]) -> frozenset[str] | None:
    """The words a text must hold where `_values`' pattern finds one of `values` (lower case): the
    pattern starts at a word boundary, so at a word that is the value's first word, or for a value
    of one word, that word with "s" or "es". None when a value is not ASCII or starts with no word
    character."""
    words: set[str] = set()
    for value in values:
        first = word_runs.rx.match(value)
        if not value.isascii() or first is None or first.start() != 0:
            return None
        word = first.group(0)
        words |= {word, word + "s", word + "es"} if word == value else {word}
    return frozenset(words)


class SlotExtractor:
    def __init__(self, slots: dict[str, SlotSpec]):
        self.specs = slots
        self._patterns = {n: pattern(s.pattern) for n, s in slots.items() if s.pattern}
        # Most messages have no digit, and most slots' patterns need one: those are not called.
        self._without_digit = {n: p for n, p in self._patterns.items() if not p.needs_digit}
        self._reply = {n: pattern(s.reply_pattern) for n, s in slots.items() if s.reply_pattern}
        self._any = {n: pattern(s.any_pattern) for n, s in slots.items() if s.any_pattern}
        # A value or an alias, as written -> the value it reads as.
        self._canonical: dict[str, dict[str, str]] = {}
        for n, s in slots.items():
            if s.values:
                values = {v.lower(): v for v in s.values}
                self._canonical[n] = values | {a.lower(): values[v.lower()] for a, v in s.aliases.items()}
        self._values = {
            # Longest first so "desk chair" wins over "chair"; a plural ("laptops") finds the value too.
            n: re.compile(
                r"\b(" + "|".join(re.escape(v) for v in sorted(words, key=len, reverse=True)) + r")(?:s|es)?\b", re.I
            )
            for n, words in self._canonical.items()
        }
        # The keys casefolded: a case-insensitive match may differ from every key in lower case ("wireleſs").
        self._folded = {n: {k.casefold(): v for k, v in words.items()} for n, words in self._canonical.items()}
        # An ASCII text names a value only if one of its words is a value's first word (or a
        # one-word value with "s" or "es"): checked first, as `Pattern` checks its pieces.
        self._value_words = {
            n: words for n, values in self._canonical.items() if (words := _leading_words(values)) is not None
        }

    def _normalize(self, name: str, match: re.Match[str]) -> str:
        spec = self.specs[name]
        groups = [g for g in match.groups() if g is not None] or [match.group(0)]
        value = spec.format.format(*[g.strip() for g in groups])
        if spec.number:
            value = value.replace(",", "")
        return value.upper() if spec.upper else value

    def extract(self, text: str) -> tuple[dict[str, Any], str]:
        """Values found anywhere in the text, and the text with those spans blanked out."""
        text = clean(text)
        found: dict[str, Any] = {}
        rest = text
        facts = TextFacts(text)
        for name, rx in (self._patterns if facts.has_digit else self._without_digit).items():
            m = rx.search(text, facts)
            if m:
                found[name] = self._normalize(name, m)
                if not self.specs[name].keep_words:
                    rest = rest.replace(m.group(0), " ")
        for name in self._values:
            if name not in found and (value := self.lookup(name, text, facts)) is not None:
                found[name] = value
        return found, rest

    def lookup(self, name: str, text: str, facts: TextFacts | None = None) -> str | None:
        """The first of `name`'s values (config `values`, or one of its `aliases`) the text names;
        `facts` are the text's, when already known."""
        rx = self._values.get(name)
        if rx is None:
            return None
        leading = self._value_words.get(name)
        words = (facts or TextFacts(text)).words if leading is not None else None
        if leading is not None and words is not None and leading.isdisjoint(words):
            return None
        m = rx.search(text)
        if m is None:
            return None
        return self._folded[name].get(m.group(1).casefold())

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
        if found is None and (rx := self._any.get(name)) is not None and rx.search(text):
            found = ANY, rx.rx.sub(" ", clean(text))  # every such phrase: "doesn't matter, no limit"
        if found is None:
            return None
        value, rest = found
        # Little words around it ("a", "it's the", "my", "maybe") say nothing else; "cancel O-12345" does.
        words = re.findall(r"[\w']+", politeness.core(rest))
        return value if len(words) <= 2 and all(len(w) <= 4 or w.lower() in STOPWORDS for w in words) else None

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
