"""What every chat channel does the same way when it delivers a message."""

from __future__ import annotations


def split_text(text: str, limit: int) -> list[str]:
    """Cut text into chunks of at most `limit` characters, preferring paragraph, line, then word
    boundaries, so a long answer reads naturally across several chat messages."""
    chunks: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[:limit]
        cut = max(window.rfind("\n\n"), window.rfind("\n"))
        if cut < limit // 2:
            cut = window.rfind(" ")
        if cut < limit // 2:
            cut = limit
        chunks.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest or not chunks:
        chunks.append(rest)
    return chunks
