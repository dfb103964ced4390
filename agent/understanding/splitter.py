"""Splits a message that makes several requests ("where is O-23456, and I also want to report a
broken charger"; "where are O-24680 and O-45678?") into one text per request.

Pure text work: the caller classifies each part and keeps the split only when every part is a
request of its own (agent/conversation/requests.py).
"""

from __future__ import annotations

import re

# Where one request ends and the next begins: a semicolon, a sentence end, or a joining word
# ("and also", ", then", " and can you") before the next request's first words.
_OPENER = (
    r"(?:i|i'd|i'm|im|can|could|would|will|please|pls|what|where|when|how|is|are|do|does|did|has|have|"
    r"open|check|add|show|list|recommend|suggest|track|refund|tell|help|create|file|report|remind|mark|"
    r"delete|remove|find|look|my|also|then|put|need|want)\b"
)
_CLAUSE = re.compile(
    r"\s*;\s*"
    r"|(?<=[.!?])\s+(?=[a-z])"
    r"|,?\s+and\s+also\s+|,\s*also\s+|,?\s+plus\s+"
    r"|,\s*(?:and\s+)?(?:then\s+)?(?=" + _OPENER + r")"
    r"|\s+and\s+then\s+"
    r"|\s+and\s+(?=(?:can|could|would|please|also|i\s+(?:also\s+)?(?:want|need|would|'d))\b)"
    # " and " before a request's verb: "check O-45678 and open a ticket about the delay"
    r"|\s+and\s+(?=(?:open|check|add|track|refund|create|file|report|remind|mark|delete|remove|find|look)\b)",
    re.I,
)
_LIST_GAP = re.compile(r"^[\s,&/]*(?:(?:and|or)\b[\s,&/]*)?$", re.I)
_JOINERS = re.compile(r"^(?:and|also|then|plus|oh|so)\b[\s,]*|[\s,]*\b(?:and|or|&)\s*$", re.I)


MIN_WORDS = 3


class RequestSplitter:
    """
    Args:
        enumerable: patterns of the slots whose several values in one request make several
            requests (order IDs, release versions), each as a compiled regex.
    """

    def __init__(self, enumerable: list[re.Pattern[str]]):
        self.enumerable = enumerable

    def split(self, text: str) -> list[str]:
        parts = [p for c in _CLAUSE.split(text) if c and (p := _tidy(c))]
        out: list[str] = []
        for part in parts:
            out += self._by_value(part)
        # "hey," or "thanks!" around a request is not a request of its own.
        out = [p for p in out if len(p.split()) >= MIN_WORDS or any(rx.search(p) for rx in self.enumerable)]
        return out if len(out) > 1 else [text]

    def _by_value(self, part: str) -> list[str]:
        """One request per value: "where are O-24680 and O-45678?" -> one text for each ID."""
        for rx in self.enumerable:
            spans = [m.span() for m in rx.finditer(part)]
            if len(spans) < 2:
                continue
            gaps = [part[a[1] : b[0]] for a, b in zip(spans, spans[1:], strict=False)]
            if not all(_LIST_GAP.match(g) for g in gaps):
                continue
            head, tail = part[: spans[0][0]], part[spans[-1][1] :]
            return [_tidy(head + part[start:end] + tail) for start, end in spans]
        return [part]


def _tidy(text: str) -> str:
    text = " ".join(text.split()).strip(" ,")
    previous = None
    while previous != text:
        previous, text = text, _JOINERS.sub("", text).strip(" ,")
    return text
