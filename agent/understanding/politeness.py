"""What people say around a request without changing it: "hi, ... thanks!", "hello again, ... cheers".

The words are the store's, in config/intents.yaml `vocabulary.openers` and `.closers`. The model
reads the request without them, and ticket and search text leaves them out.
"""

from __future__ import annotations

import re

from agent.text import clean

# What a sign-off may be followed by (`Politeness._trail`'s last class), ASCII whitespace included.
_AFTER_CLOSER = " \t\n\r\f\v\x1c\x1d\x1e\x1f,.!?:;)("


def _alternatives(phrases: list[str]) -> str:
    """Longest first, each phrase's words apart by any spacing: "thank you" matches "thank  you"."""
    words = [[re.escape(w) for w in p.lower().split()] for p in phrases if p.strip()]
    return "|".join(r"\s+".join(ws) for ws in sorted(words, key=lambda ws: -len(" ".join(ws))))


class Politeness:
    """
    Args:
        openers: greetings and lead-ins said before a request ("hi", "sorry to bother you").
        closers: thanks and sign-offs said after it ("thanks in advance", "cheers").
    """

    def __init__(self, openers: list[str], closers: list[str]):
        never = r"(?!x)x"  # an empty list matches nothing
        self._lead = re.compile(rf"^(?:(?:{_alternatives(openers) or never})\b[\s,.!:;\-]*)+", re.I)
        self._trail = re.compile(
            rf"(?:[\s,.!:;)(\-]*\b(?:{_alternatives(closers) or never})(?:\b|(?<=\W))[\s,.!?:;)(]*)+$", re.I
        )
        # A sign-off ends the text but for what may follow it, so an ASCII text whose end is no
        # closer's last word is not searched: the `$`-anchored search tries every position. A
        # closer of such characters alone (":)") may end a text only where something follows its
        # last word. Non-ASCII closers are always searched for (re's case folding is wider).
        ends = [p.lower().split()[-1].rstrip(_AFTER_CLOSER) for p in closers if p.split()]
        self._ends = tuple(e for e in ends if e) if all(p.isascii() for p in closers) else None
        self._bare_closer = not all(ends)
        # Every word of a sign-off is a word of some closer, so one cannot start before the end of
        # the last word that is none (found from the end): the search for it starts there.
        words = sorted({w for p in closers for w in re.findall(r"\w+", p.lower())}, key=len, reverse=True)
        self.closer_words = frozenset(words)  # every word of a sign-off ("thank", "much", "cheers")
        none = "|".join(map(re.escape, words)) or never
        self._last_other = re.compile(rf"(?s:.*)\b(?!(?:{none})\b)\w+", re.I)

    def _no_closer(self, text: str) -> str:
        """`text` without its sign-off."""
        if self._ends is not None and text.isascii():
            tail = text.rstrip(_AFTER_CLOSER)
            if not tail.lower().endswith(self._ends) and not (self._bare_closer and tail != text):
                return text
        other = self._last_other.match(text)
        m = self._trail.search(text, other.end() if other else 0)
        return text[: m.start()] + text[m.end() :] if m else text

    def _no_opener(self, text: str) -> str:
        """`text` without its greeting (the pattern is anchored at the start: matched there, not
        searched for at every position)."""
        m = self._lead.match(text)
        return text[m.end() :] if m else text

    def core(self, masked: str) -> str:
        """The request without greeting and sign-off (all of it when that is all there is, or when
        only one word would be left: "good bye" is no "good" with a sign-off, "no thanks" no "no")."""
        stripped = self._no_closer(self._no_opener(masked.strip())).strip()
        return stripped if len(stripped.split()) > 1 else masked.strip() or masked

    def sign_off(self, text: str) -> bool:
        """The text is nothing but a sign-off ("please.", "thanks!")."""
        return not self._no_closer(text.strip()).strip(" ,.;:-!?")

    def plain(self, text: str) -> str:
        """The message without greeting and sign-off, as written: what a ticket or a search should say."""
        stripped = self._no_closer(self._no_opener(clean(text))).strip(" ,.;:-")
        return stripped or clean(text)
