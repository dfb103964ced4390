"""`knowledge_base_search`: the knowledge base's sections that answer a question or fix a device
problem, offline.

A question (a store policy) is ranked by BM25 over the sections' words. A device problem (a
`symptom`, with the `device` and `model` the customer has) is matched by meaning: only sections about
that device class whose heading means the symptom are returned (agent/tools/section_fit.py), so an
answer never shows another device's or another problem's fix. Each hit carries its reference
(`file.md#section`) so an answer can cite where a fix comes from.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from typing import Literal

from pydantic import Field, model_validator

from agent.domain.catalog import Item, KBSection
from agent.domain.contexts import ToolContext
from agent.sources import Inventory
from agent.text import Normalizer, sentences_of
from agent.tools.registry import Tool, ToolDeps, ToolOutput, ToolParams, tool_factory
from agent.tools.section_fit import DeviceClasses, FitThresholds, SectionFinder, named_items, without_model
from agent.understanding.scorer import MeaningSimilarity

K1 = 1.5
B = 0.75
SNIPPET_CHARS = 400


class KBSearchParams(ToolParams):
    query: str = Field("", max_length=500, description="a question, in the customer's words")
    symptom: str | None = Field(
        None, max_length=300, description="for a device problem: what goes wrong, as the customer said it"
    )
    device: str | None = Field(None, max_length=100, description="for a device problem: the kind of device")
    model: str | None = Field(None, max_length=100, description="for a device problem: its make and model")
    sections: Literal["any", "policies"] = Field(
        "any",
        description="'policies' for a question about the store's rules (returns, refunds, delivery, payment): "
        "no device fixes",
    )
    limit: int = Field(3, ge=1, le=10)

    @model_validator(mode="after")
    def _something_to_search(self) -> KBSearchParams:
        if len(self.query.strip()) < 2 and len((self.symptom or "").strip()) < 2:
            raise ValueError("give a query, or the symptom of a device problem")
        return self


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
    for sentence in sentences_of(flat):
        if len(kept) + len(sentence) + 1 > SNIPPET_CHARS:
            break
        kept = f"{kept} {sentence}".strip()
    # One sentence longer than the limit: cut at a word, and say so.
    return kept or flat[: SNIPPET_CHARS - 3].rsplit(" ", 1)[0] + "..."


class Troubleshooting:
    """What device problems are matched with: the store's items and device words, the embedded
    model, and the calibrated thresholds (config/knowledge.yaml).

    Args:
        inventory: the store's items (their categories are the device classes).
        device_words: other words customers use for devices (the `device` slot's values).
        similarity: the embedded model understanding uses.
        thresholds: how close is close enough.
    """

    def __init__(
        self, inventory: Inventory, device_words: list[str], similarity: MeaningSimilarity, thresholds: FitThresholds
    ):
        self.inventory = inventory
        self.device_words = device_words
        self.similarity = similarity
        self.thresholds = thresholds


def _device_name(p: KBSearchParams, named: list[Item]) -> str | None:
    """What the customer has, as an answer names it: the store's name for the item they named, else
    their make and model with the kind of device when it does not say it ("Acme keyboard")."""
    if len(named) == 1:
        return named[0].name
    said = [p.model or "", p.device or ""]
    if said[1] and said[1].lower() in said[0].lower():
        said[1] = ""
    return " ".join(w for w in said if w) or None


def _hit(section: KBSection, score: float) -> dict:
    return {
        "ref": section.ref,
        "title": section.title,
        "heading": section.heading,
        "snippet": _snippet(section.text),
        "steps": section.steps,
        "score": round(score, 3),
    }


@tool_factory
def knowledge_tools(deps: ToolDeps) -> list[Tool]:
    """The knowledge-base search; device problems are matched only with calibrated `deps.fit`."""
    source, troubleshooting = deps.knowledge, None
    if deps.inventory is not None and deps.meaning is not None and deps.fit is not None:
        troubleshooting = Troubleshooting(deps.inventory, list(deps.device_words), deps.meaning, deps.fit)
    if source is None:
        return []
    index: BM25Index | None = None
    finder: SectionFinder | None = None

    async def finder_of(help_: Troubleshooting, items: list[Item]) -> SectionFinder:
        nonlocal finder
        if finder is None:  # the sections and the store's categories never change while running
            categories = sorted({i.category for i in items})
            classes = DeviceClasses(categories, help_.device_words, help_.similarity, help_.thresholds.same_device)
            finder = SectionFinder(await source.sections(), classes, help_.similarity, help_.thresholds)
        return finder

    async def fixes(p: KBSearchParams, help_: Troubleshooting) -> ToolOutput:
        items = await help_.inventory.items()
        finder = await finder_of(help_, items)
        symptom = without_model(" ".join((p.symptom or "").split()).strip(" .!?"), p.model, p.device)
        have = finder.classes.of_customer(p.device, p.model, items)
        fits = finder.find(symptom, have)  # a few dozen cached vectors: no thread needed
        named = named_items(p.device, p.model, items)
        data = {
            "query": p.query or symptom,
            "symptom": symptom,
            "device": _device_name(p, named),
            "device_class": sorted(have) if have else None,
            # Only sections about this device and this symptom: none means the knowledge base has no fix.
            "hits": [_hit(f.section, f.score) for f in fits[: p.limit]],
        }
        return ToolOutput(data=data)

    async def knowledge_base_search(p: KBSearchParams, ctx: ToolContext) -> ToolOutput:
        nonlocal index
        if p.symptom and troubleshooting is not None:
            return await fixes(p, troubleshooting)
        if p.symptom:  # no calibrated thresholds: shared words are no sign that a fix fits this device
            return ToolOutput(data={"query": p.query, "symptom": p.symptom, "device": p.model or p.device, "hits": []})
        if index is None:  # built on first use; the sections never change while running
            index = await asyncio.to_thread(BM25Index, await source.sections())
        query = p.query or p.symptom or ""
        policies = p.sections == "policies" and troubleshooting is not None
        hits = [_hit(s, score) for score, s in index.search(query, len(index.sections) if policies else p.limit)]
        if troubleshooting is not None:
            # What each section is about: a kind of device (a fix), or none (a store policy).
            found = await finder_of(troubleshooting, await troubleshooting.inventory.items())
            about = {s.ref: kind for s, kind in found.about}
            hits = [h | {"about": about.get(h["ref"])} for h in hits]
        if policies:
            # A section about a kind of device is a fix, never a policy ("a warranty on laptops" is
            # not answered with how to cool a laptop).
            hits = [h for h in hits if not h["about"]][: p.limit]
        return ToolOutput(data={"query": query, "hits": hits})

    return [
        Tool(
            "knowledge_base_search",
            "Search the store's knowledge base: a question, or a device problem (the symptom with the device "
            "and model), for which only fixes of that device and problem come back. Hits carry references.",
            KBSearchParams,
            knowledge_base_search,
        )
    ]
