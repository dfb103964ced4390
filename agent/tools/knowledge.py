"""`knowledge_base_search`: BM25 over the knowledge base's sections, offline and in pure Python.

Each hit carries its reference (`file.md#section`) so an answer can cite where a fix comes from.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections import Counter

from pydantic import Field

from agent.catalog import KBSection
from agent.contexts import ToolContext
from agent.interfaces import KnowledgeSource
from agent.text import Normalizer
from agent.tools.registry import Tool, ToolOutput, ToolParams

K1 = 1.5
B = 0.75
SNIPPET_CHARS = 400


class KBSearchParams(ToolParams):
    query: str = Field(min_length=2, max_length=500)
    limit: int = Field(3, ge=1, le=10)


class BM25Index:
    """Okapi BM25 with the usual k1/b; a heading's words count twice, since headings name the problem."""

    def __init__(self, sections: list[KBSection]):
        self.norm = Normalizer({}, [])
        self.sections = sections
        self.docs = [Counter(self._doc_tokens(s)) for s in sections]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lengths) / len(self.lengths) if self.lengths else 0.0
        df: Counter[str] = Counter()
        for d in self.docs:
            df.update(d.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def _doc_tokens(self, s: KBSection) -> list[str]:
        head = self.norm.tokens(f"{s.title} {s.heading}")
        return head * 2 + self.norm.tokens(s.text)

    def search(self, query: str, limit: int) -> list[tuple[float, KBSection]]:
        terms = set(self.norm.tokens(query))
        scored = []
        for doc, length, section in zip(self.docs, self.lengths, self.sections, strict=True):
            score = 0.0
            for t in terms & doc.keys():
                tf = doc[t]
                score += self.idf[t] * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / (self.avg or 1)))
            if score > 0:
                scored.append((score, section))
        scored.sort(key=lambda x: -x[0])
        return scored[:limit]


def _snippet(text: str) -> str:
    """Whole sentences up to SNIPPET_CHARS: an answer read to a customer never stops mid-sentence."""
    flat = " ".join(text.split())
    if len(flat) <= SNIPPET_CHARS:
        return flat
    kept = ""
    for sentence in re.split(r"(?<=[.!?])\s+", flat):
        if len(kept) + len(sentence) + 1 > SNIPPET_CHARS:
            break
        kept = f"{kept} {sentence}".strip()
    # One sentence longer than the limit: cut at a word, and say so.
    return kept or flat[: SNIPPET_CHARS - 3].rsplit(" ", 1)[0] + "..."


def knowledge_tools(source: KnowledgeSource) -> list[Tool]:
    index: BM25Index | None = None

    async def knowledge_base_search(p: KBSearchParams, ctx: ToolContext) -> ToolOutput:
        nonlocal index
        if index is None:  # built on first use; the sections never change while running
            index = await asyncio.to_thread(BM25Index, await source.sections())
        hits = [
            {
                "ref": s.ref,
                "title": s.title,
                "heading": s.heading,
                "snippet": _snippet(s.text),
                "steps": s.steps,
                "score": round(score, 3),
            }
            for score, s in index.search(p.query, p.limit)
        ]
        return ToolOutput(data={"query": p.query, "hits": hits})

    return [
        Tool(
            "knowledge_base_search",
            "Search the store's knowledge base; returns ranked snippets with references.",
            KBSearchParams,
            knowledge_base_search,
        )
    ]
