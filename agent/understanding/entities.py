"""Typed values in a message: order ids, money, invoice/reference numbers, versions, dates, numbers, models.

Reading order matters: references are found first so "invoice 88213" never becomes an order id or
a budget, then order ids, then money (which needs a currency), then what numbers are left.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import BaseModel

from agent.text import word_runs
from agent.understanding.slots import Pattern, TextFacts

# "invoice INV-4471", "bill 88213", "receipt #55123", "ref 99812", "INV-20391", "tracking 1Z999..."
_REFERENCE = re.compile(
    r"(?i)\b(?:invoices?|inv|bills?|receipts?|ref(?:erence)?|rf|tracking(?:\s+number)?|ticket|case)"
    r"(?:\s*(?:no\.?|number|num|id|#|:))?\s*[-#:]?\s*((?:[a-z]{1,4}[-#]?)?\d[\d-]*\d|\d)\b"
)
# Codes like "B-3391" or "RF-44821" (never "O-12345", which is an order id).
_CODE = re.compile(r"(?i)\b(?!o-)([a-z]{1,4}-\d{3,})\b")
# O-12345, o12345, "o 12345", O_12345, #O-12345, O–12345 (dash variants), "order 12345", "order no. 12345".
_ORDER_DIGITS = r"\d{4,10}"
_ORDER = re.compile(
    rf"(?i)(?<![\w-])#?o\s?[-_#.\u2010-\u2015]?\s?({_ORDER_DIGITS})\b"
    rf"|\border(?:\s*(?:id|number|no\.?|num|#))?\s*[:#]?\s*(?:o[-_]?)?({_ORDER_DIGITS})\b"
)
# A number alone that may be an order id written without its prefix: the digits of one.
BARE_ORDER = re.compile(_ORDER_DIGITS)
_WORD_NUMBERS = {
    "five": 5,
    "ten": 10,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "a hundred": 100,
    "one hundred": 100,
}
_UNITS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
_CURRENCY_WORDS = r"dollars?|usd|bucks|baht|thb|euros?|eur|pounds?|gbp"
_NUM = r"\d[\d,]*(?:\.\d{1,2})?"
_MONEY = re.compile(
    rf"(?i)(?P<pre>us\$|[$€£฿]|usd|eur|gbp|thb)\s?(?P<a>{_NUM})(?!\d)"
    rf"|(?<![\w.])(?P<b>{_NUM})\s?(?P<post>[$€£฿]|(?:{_CURRENCY_WORDS})\b)"
    rf"|\b(?P<w>(?:a |one )?hundred|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)"
    rf"(?:[\s-](?:one|two|three|four|five|six|seven|eight|nine))?|fifteen|ten|five)\s(?P<wpost>{_CURRENCY_WORDS})\b"
)
_CURRENCY = {
    "$": "USD",
    "us$": "USD",
    "usd": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "bucks": "USD",
    "€": "EUR",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "£": "GBP",
    "gbp": "GBP",
    "pound": "GBP",
    "pounds": "GBP",
    "฿": "THB",
    "thb": "THB",
    "baht": "THB",
}
_DAY_WORDS = r"today|tomorrow|yesterday|tonight|(?:next |last |this )?(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_DATE = re.compile(
    rf"(?i)\b(?:{_DAY_WORDS}"
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|(?:the )?\d{1,2}(?:st|nd|rd|th)"
    r"|(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?"
    r"|nov(?:ember)?|dec(?:ember)?)\.? \d{1,2}(?:st|nd|rd|th)?)\b"
)
# What _DATE finds in a text without a digit: the same matches, as every other branch needs one.
_DAY_DATE = re.compile(rf"(?i)\b(?:{_DAY_WORDS})\b")
# 'book the dentist', "renew passport": a quoted title is what a task or ticket is called.
_TITLE = re.compile(r"(?<![\w])(['\"\u201c\u2018])([^'\"\u201c\u201d\u2018\u2019]{2,80})['\"\u201d\u2019](?![\w])")
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w.])")
# 2.4.1, v2.5.0-rc1; a two-part version only after "release", "version" or "v" (29.99 is a price).
_VERSION = re.compile(
    r"(?i)(?<![\w.$])v?(\d+\.\d+\.\d+(?:-[0-9a-z][0-9a-z.]*)?)(?!\w)(?!\.\d)"
    r"|(?<=\b(?:release|version) )v?(\d+\.\d+)(?!\w)(?!\.\d)|\bv(\d+\.\d+)(?!\w)(?!\.\d)"
)

# What each pattern cannot match without (a digit, a quote, a currency or day word), checked
# before the pattern is tried.
_CHECKED = {rx: Pattern(rx.pattern) for rx in (_TITLE, _REFERENCE, _CODE, _ORDER, _VERSION, _MONEY, _DATE)}


class Money(BaseModel):
    amount: str  # plain decimal, "45.99"
    currency: str  # ISO code


@dataclass(slots=True)
class Entities:
    """What was found, and the message with each value replaced by its type's word (a dataclass:
    one is built for every message, of values already of their types)."""

    order_ids: list[str] = field(default_factory=list)
    money: list[Money] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    dates: list[str] = field(default_factory=list)
    numbers: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    versions: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    masked: str = ""


def _plain(number: str) -> str:
    value = number.replace(",", "")
    return value[:-3] if value.endswith(".00") else value


def _words_to_number(words: str) -> int:
    words = words.lower().replace("-", " ")
    if words in _WORD_NUMBERS:
        return _WORD_NUMBERS[words]
    head, _, unit = words.partition(" ")
    return _WORD_NUMBERS.get(head, 0) + _UNITS.get(unit, 0)


def _with_short_names(kinds: dict[str, str]) -> dict[str, str]:
    """Names as people shorten them: the brand and model without the edition, or the model code
    alone, name a product too. A part counts when it says which product (a word of four letters or
    more, or a model code of letters and digits) and every product it is part of has the same kind."""
    parts: dict[str, set[str]] = {}
    for name, kind in kinds.items():
        words = name.split()
        spans = [" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 2, len(words) + 1)]
        spans += [w for w in words if len(w) >= 4 and re.search(r"\d", w) and re.search(r"[a-z]", w)]
        for span in spans:
            if span != name and any(len(w) >= 4 and not w.isdigit() for w in span.split()):
                parts.setdefault(span, set()).add(kind)
    return {span: next(iter(k)) for span, k in parts.items() if len(k) == 1} | kinds


class EntityReader:
    """Finds typed values.

    Args:
        names: product and model names from the store's data, each with its kind ("mouse"): a name
            is masked to its kind, so "my G502 overheats" reads like "my mouse overheats".
    """

    def __init__(self, names: dict[str, str] | None = None):
        self._kinds = _with_short_names({n.lower(): k for n, k in (names or {}).items() if n.strip()})
        ordered = sorted(self._kinds, key=len, reverse=True)
        self._names = re.compile(r"(?i)\b(" + "|".join(map(re.escape, ordered)) + r")\b") if ordered else None
        # A name found in an ASCII text begins with a whole word of the text: its own first word
        # (it starts at a word boundary and its first word ends at a non-word character or at its
        # end). A text without any name's first word is not searched with the long alternation.
        firsts = [re.match(r"\w+", name) for name in ordered]
        self._first_words: frozenset[str] | None = (
            frozenset(m.group(0) for m in firsts if m)
            if all(m and m.start() == 0 for m in firsts) and all(name.isascii() for name in ordered)
            else None
        )

    def read(self, text: str, facts: TextFacts | None = None) -> Entities:
        """The typed values in `text`; `facts` are the text's, when already known."""
        found = Entities()
        masked = text
        facts = facts or TextFacts(text)

        def sub(rx: re.Pattern[str], word: str, collect) -> None:
            nonlocal masked, facts

            def repl(m: re.Match[str]) -> str:
                collect(m)
                # "invoice INV-4471" -> "invoice reference": the kind of document still says what is asked.
                lead = m.group(0)[: m.start(1) - m.start(0)].strip(" #:-") if rx is _REFERENCE else ""
                if rx is _DATE and not any(c.isdigit() for c in m.group(0)):
                    return m.group(0)  # "today", "next friday": words the model reads as they are
                return f" {lead} {word} " if lead else f" {word} "

            # Most messages have no digit, no quote and no currency or day word, and every pattern
            # needs one of them: such a pattern is not run.
            if _CHECKED[rx].may_match(masked, facts):
                masked, count = rx.subn(repl, masked)
                facts = TextFacts(masked) if count else facts

        sub(_TITLE, "title", lambda m: found.titles.append(m.group(2)))
        if facts.has_digit:  # what these four need first: most messages go no further
            sub(_REFERENCE, "reference", lambda m: found.references.append(m.group(1).upper()))
            sub(_CODE, "reference", lambda m: found.references.append(m.group(1).upper()))
            sub(_ORDER, "order", lambda m: found.order_ids.append(f"O-{m.group(1) or m.group(2)}"))
            sub(_VERSION, "version", lambda m: found.versions.append(next(g for g in m.groups() if g)))
        sub(_MONEY, "money", lambda m: found.money.append(self._money(m)))
        if self._names and self._may_name(masked):
            masked = self._names.sub(self._kind_of(found), masked)
            facts = TextFacts(masked)
        if facts.has_digit:
            sub(_DATE, "date", lambda m: found.dates.append(m.group(0)))
        elif _CHECKED[_DATE].may_match(masked, facts):
            found.dates = _DAY_DATE.findall(masked)  # words the model reads as they are: nothing to mask
        if facts.has_digit:
            found.numbers = [_plain(n) for n in _NUMBER.findall(masked)]
            # A number's digits mean nothing to the model; that there is one does ("task number").
            masked = _NUMBER.sub(" number ", masked)
        found.masked = " ".join(masked.split())
        return found

    def _may_name(self, text: str) -> bool:
        """False only when no product name can be in the text (see `_first_words`)."""
        if self._first_words is None or not text.isascii():
            return True
        return not self._first_words.isdisjoint(word_runs(text.lower()))

    def _kind_of(self, found: Entities):
        def repl(m: re.Match[str]) -> str:
            found.models.append(m.group(1))
            return f" {self._kinds.get(m.group(1).lower()) or 'product'} "

        return repl

    @staticmethod
    def _money(m: re.Match[str]) -> Money:
        if m.group("w"):
            return Money(amount=str(_words_to_number(m.group("w"))), currency=_CURRENCY[m.group("wpost").lower()])
        amount = m.group("a") or m.group("b")
        unit = (m.group("pre") or m.group("post")).lower()
        return Money(amount=_plain(amount), currency=_CURRENCY.get(unit, "USD"))
