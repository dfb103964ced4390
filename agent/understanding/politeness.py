"""What people say around a request without changing it: "hi, ... thanks!", "hello again, ... cheers".

The words are the store's, in config/intents.yaml `vocabulary.openers` and `.closers`. The model
reads the request without them, and ticket and search text leaves them out.
"""

from __future__ import annotations

import re

from agent.turn.text import clean


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

    def core(self, masked: str) -> str:
        """The request without greeting and sign-off (all of it when that is all there is)."""
        stripped = self._trail.sub("", self._lead.sub("", masked.strip())).strip()
        return stripped or masked

    def plain(self, text: str) -> str:
        """The message without greeting and sign-off, as written: what a ticket or a search should say."""
        stripped = self._trail.sub("", self._lead.sub("", clean(text))).strip(" ,.;:-")
        return stripped or clean(text)
