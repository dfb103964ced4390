"""Text normalization shared by the rules classifier: the ordinary ways people phrase things."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from typing import Literal

from agent.config.schema import Messages
from agent.errors import InputError
from agent.templates import render

# Words that carry no intent. Question words stay: "where" and "when" matter for orders.
_STOPWORDS = """a an the i me my mine we our you your it its is are was were be been am do does did
to of in on at for from with about as by or and but so if then than that this these those
there here can could would should will shall may might must have has had
please pls plz just really actually basically kindly okay ok um uh
like maybe perhaps probably possibly some any yet still also too very quite bit lot get got gotten want wanna need
let know tell give see into up out go going gonna im ive id
thats thatll itll youre youve youll theyre theres"""
STOPWORDS = frozenset(_STOPWORDS.split())


class Runs:
    """The longest runs of a character class in a text, at least `shortest` long, as `re.findall`
    finds them. An ASCII text (most messages) is read with one byte translation and a split: the
    regular expression's search costs a quarter of a microsecond a word, about four times as much."""

    def __init__(self, character_class: str, shortest: int = 1):
        self.rx = re.compile(f"{character_class}+" if shortest == 1 else f"{character_class}{{{shortest},}}")
        self.shortest = shortest
        # Every byte outside the class becomes a space; a text of ASCII has no byte above 127.
        inside = re.compile(character_class)
        self._table = bytes(c if c < 128 and inside.fullmatch(chr(c)) else 32 for c in range(256))

    def __call__(self, text: str) -> list[str]:
        if not text.isascii():
            return self.rx.findall(text)  # type: ignore[no-any-return]
        runs = text.encode("ascii").translate(self._table).decode("ascii").split()
        return runs if self.shortest == 1 else [r for r in runs if len(r) >= self.shortest]


# A word: letters and digits, with inner hyphens ("wi-fi", "x-17") and apostrophes ("don't"),
# or a number after "#" ("#2"); the apostrophes are dropped from the word read ("dont", "im"), as
# the stop words and the banks' tokens spell them.
_WORD = re.compile(r"#\d+|[^\W_]+(?:['\u2019-][^\W_]+)*")
_APOSTROPHES = str.maketrans("", "", "'\u2019")


def written(text: str) -> list[str]:
    """The words of a text as it writes them (case and apostrophes kept): what `words` reads."""
    return _WORD.findall(text)


def words(text: str) -> list[str]:
    """The one way a text splits into words, everywhere a step compares words (a reply with the
    list it picks from, a question with the items it asks about): lower case, apostrophes dropped."""
    return [w.translate(_APOSTROPHES) for w in _WORD.findall(text.lower())]


@functools.lru_cache(maxsize=4096)
def _phrase(phrase: str) -> str:
    """A word list's phrase as its words (the lists are config: each is split once)."""
    return " ".join(words(phrase))


def says(text: str, phrases: Iterable[str]) -> list[str]:
    """The phrases of a word list that the text says, as whole words, longest first."""
    said = f" {' '.join(words(text))} "
    ordered = sorted(phrases, key=len, reverse=True)
    return [p for p in ordered if (phrase := _phrase(p)) and f" {phrase} " in said]


def phrase_finder(phrases: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern that finds any of `phrases` as whole words, the longest first (group 1 is the
    phrase as written in the text); None for no phrases."""
    ordered = sorted({p for p in phrases if p}, key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(map(re.escape, ordered)) + r")\b", re.I) if ordered else None


def without(text: str, phrases: Iterable[str]) -> str:
    """The text with each of `phrases` taken out where it stands as whole words, spaces tidied."""
    for phrase in phrases:
        text = re.sub(rf"(?<![\w#-]){re.escape(phrase)}(?![\w-])", " ", text, flags=re.I)
    return " ".join(text.split())


def clauses(text: str) -> list[str]:
    """The clauses of a message, split at sentence and clause punctuation ("by the way, is it wireless?")."""
    return [c for c in re.split(r"[,;.!?]+", text) if c.strip()]


word_runs = Runs(r"\w")
_lower_words = Runs("[a-z0-9]")

# Control characters and invisible format characters: bidi overrides and isolates (U+202E turns
# "gnp.exe" into "exe.png" on screen), zero-width spaces and joiners, soft hyphens, BOMs.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # become spaces
_INVISIBLE = re.compile(r"[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]")


def clean(text: str) -> str:
    """NFKC-normalize, drop control and invisible characters, fold curly quotes, collapse whitespace."""
    if text.isascii() and text.isprintable():
        return " ".join(text.split())  # nothing to normalize, drop or fold: most messages
    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE.sub("", _CONTROL.sub(" ", text))
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    return " ".join(text.split())


def visible(text: str) -> str:
    """`text` without invisible format characters (bidi overrides, zero-width), line breaks kept."""
    return _INVISIBLE.sub("", text)


def stem(word: str) -> str:
    """A light suffix stripper: tracking/tracked/tracks -> track, arrives/arrive -> arriv."""
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed") or len(word) > 3 and word.endswith("es") and word[-3] in "sxz":
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    return word


class Normalizer:
    """Maps a message to canonical content tokens: lowercase, stemmed, synonyms folded, filler dropped."""

    def __init__(self, synonyms: dict[str, str], filler: list[str]):
        self.synonyms = {stem(k.lower()): stem(v.lower()) for k, v in synonyms.items()}
        self.drop = STOPWORDS | {w.lower() for w in filler}
        # Words recur from message to message: each one's token is worked out once.
        self._token = functools.lru_cache(maxsize=16384)(self._folded)

    def _folded(self, word: str) -> str:
        s = stem(word)
        return self.synonyms.get(s, s)

    def tokens(self, text: str) -> list[str]:
        words = _lower_words(clean(text).lower().replace("'", ""))
        drop, token = self.drop, self._token
        return [token(w) for w in words if w not in drop]

    def phrase(self, text: str) -> tuple[str, ...]:
        return tuple(self.tokens(text))


Answer = Literal["yes", "no"]


def check_input(text: str, m: Messages, limit: int) -> None:
    """An empty or overlong message is refused before anything is loaded or stored."""
    if not text:
        raise InputError(m.empty)
    if len(text) > limit:
        raise InputError(render(m.too_long, {"length": len(text), "limit": limit}))


def sentences(text: str) -> list[str]:
    """The message's sentences, when it has more than one ("No. the freezing"); else none."""
    parts = sentences_of(text)
    return parts if len(parts) > 1 else []


def sentences_of(text: str) -> list[str]:
    """The text's sentences, split after their mark and the space after it."""
    return [p for p in re.split(r"(?<=[.!?;])\s+", text.strip()) if p.strip(" .!?;")]


_CLAUSE_START = re.compile(r"^|(?<=[.!?,;])\s+")
_CLAUSE_END = re.compile(r"[.!?,;]\s")


def clause_tails(text: str) -> list[tuple[str, str]]:
    """Each clause of the text with the rest of the text from its start ("No. the freezing" ->
    ("No", "No. the freezing"), ("the freezing", "the freezing")): a clause ends at a mark with a
    space after it, so "3.5" and "O-12,345" stay whole."""
    out = []
    for start in _CLAUSE_START.finditer(text):
        rest = text[start.end() :]
        out.append((_CLAUSE_END.split(rest, maxsplit=1)[0], rest))
    return out
