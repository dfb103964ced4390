"""`inventory_query`: filter and rank the store's items. Read-only; every price and stock figure
the sales agent says comes from here."""

from __future__ import annotations

import asyncio

from pydantic import Field

from agent.domain.catalog import Item
from agent.domain.contexts import ToolContext
from agent.text import STOPWORDS, stem, words
from agent.tools.registry import Tool, ToolDeps, ToolOutput, ToolParams, tool_factory

# Up to this many items a query runs inline (well under a millisecond); beyond, on a thread.
INLINE_ITEMS = 2000

# Words of a product question that say nothing about which product.
GENERIC_WORDS = STOPWORDS | {"stock", "available", "availability", "carry", "sell", "left", "one", "item", "product"}


class InventoryParams(ToolParams):
    category: str | None = Field(None, max_length=100, description="e.g. laptop, tent")
    max_price: float | None = Field(None, ge=0, description="budget ceiling")
    min_price: float | None = Field(None, ge=0)
    brand: str | None = Field(None, max_length=100)
    exclude_brands: list[str] = Field(default_factory=list, max_length=50)
    prefer_brands: list[str] = Field(default_factory=list, max_length=50)
    features: list[str] = Field(
        default_factory=list, max_length=20, description="attribute words every item must have, e.g. wireless"
    )
    prefer_features: list[str] = Field(
        default_factory=list, max_length=20, description="attribute words that rank an item first"
    )
    sku: str | None = Field(None, max_length=100)
    skus: list[str] = Field(default_factory=list, max_length=10, description="several items by SKU")
    query: str | None = Field(None, max_length=300, description="free text naming a product")
    whole_name: bool = Field(False, description="the query is a make and model: an item must have all its words")
    instead_category: str | None = Field(
        None, max_length=100, description="when the query names nothing: the in-stock items of this category instead"
    )
    question: str | None = Field(
        None, max_length=300, description="a shopper's question about the items (the result names what it asks about)"
    )
    in_stock_only: bool = False
    limit: int = Field(3, ge=1, le=10)


def _words(text: str) -> set[str]:
    return {stem(w) for w in words(text)}


# Plurals the suffix stemmer cannot undo.
_IRREGULAR = {"mice": "mouse", "knives": "knife", "shelves": "shelf", "feet": "foot"}


def _canonical(word: str) -> str:
    word = word.strip().lower()
    return stem(_IRREGULAR.get(word, word))


def _same(a: str, b: str) -> bool:
    return _canonical(a) == _canonical(b)


_STEMMED_GENERIC = {stem(w) for w in GENERIC_WORDS}


def _public(item: Item) -> dict:
    return item.model_dump() | {"in_stock": item.stock > 0}


class _Entry:
    """An item with the words filters compare against, computed once per inventory, not per query."""

    __slots__ = ("item", "category", "brand", "name_words", "text_words", "feature_words")

    def __init__(self, item: Item):
        self.item = item
        self.category = _canonical(item.category)
        self.brand = item.brand.lower()
        self.name_words = _words(item.name)
        self.text_words = _words(f"{item.sku} {item.name} {item.brand} {item.category}")
        self.feature_words = _words(" ".join([item.name, *item.attributes.keys(), *item.attributes.values()]))


class InventoryQuery:
    """Filters in a fixed order (sku/query, category, brand, price, features), then ranks.

    Args:
        items: the inventory; build one InventoryQuery per inventory and reuse it.
    """

    def __init__(self, items: list[Item]):
        self.items = items
        self.entries = [_Entry(i) for i in items]
        # Per attribute label: its label's words, and the words of its values (stem -> as written).
        self.vocabulary: dict[str, tuple[set[str], dict[str, str]]] = {}
        for item in items:
            for label, value in item.attributes.items():
                labels, values = self.vocabulary.setdefault(label, (_words(label) - _STEMMED_GENERIC, {}))
                # A unit or a bare number ("60 g") names nothing a shopper asks for by itself.
                values.update({stem(w): w for w in words(value) if len(w) > 1 and not w.isdigit()})
        self.known = {w for e in self.entries for w in e.text_words | e.feature_words}

    @staticmethod
    def _text_matches(pool: list[_Entry], query: str, whole: bool = False) -> list[_Entry]:
        wanted = _words(query) - {stem(w) for w in GENERIC_WORDS}
        if not wanted:
            return []
        scored = [(len(wanted & e.text_words), e) for e in pool]
        best = max((h for h, _ in scored), default=0)
        if whole and best < len(wanted):
            return []  # another model of the same make is not the product asked for
        return [e for h, e in scored if h and h == best]

    def run(self, p: InventoryParams) -> dict:
        pool = self.entries
        if p.sku or p.skus:
            # Items named by SKU are the items asked about, in the order asked; free text adds nothing.
            order = [s.lower() for s in [*([p.sku] if p.sku else []), *p.skus]]
            pool = [e for e in pool if e.item.sku.lower() in order]
            pool.sort(key=lambda e: order.index(e.item.sku.lower()))
        elif p.query:
            pool = self._text_matches(pool, p.query, p.whole_name)
        if p.category:
            pool = self._of_kind(pool, p.category)
        # A product asked for by name that the store lacks: what it has of that kind instead.
        instead = self._of_kind(self.entries, p.instead_category) if p.query and p.instead_category and not pool else []
        if p.brand:
            pool = [e for e in pool if _same(e.brand, p.brand)]
        excluded = {b.lower() for b in p.exclude_brands}
        skipped = sorted({e.item.brand for e in pool if e.brand in excluded})
        pool = [e for e in pool if e.brand not in excluded]
        required = [_words(f) for f in p.features]
        lacking = [e for e in pool if not all(w <= e.feature_words for w in required)]
        pool = [e for e in pool if all(w <= e.feature_words for w in required)]
        if p.min_price is not None:
            pool = [e for e in pool if e.item.price >= p.min_price]
        over = [e.item for e in pool if p.max_price is not None and e.item.price > p.max_price]
        if p.max_price is not None:
            pool = [e for e in pool if e.item.price <= p.max_price]
        wanted = [_words(f) for f in p.prefer_features]
        preferred = {b.lower() for b in p.prefer_brands}

        def rank(e: _Entry) -> tuple:
            # In stock first, then more of the preferred features, a preferred brand, and the higher
            # price within budget (the most capable option the customer said they can afford).
            hits = sum(1 for w in wanted if w <= e.feature_words)
            return (e.item.stock <= 0, -hits, e.brand not in preferred, -e.item.price)

        ranked = [e.item for e in (pool if p.sku or p.skus else sorted(pool, key=rank))]
        matches = [i for i in ranked if i.stock > 0] if p.in_stock_only else ranked
        alternatives = sorted((i for i in over if i.stock > 0), key=lambda i: i.price)[:2] if not matches else []
        # Nothing has every feature asked for: what comes closest is the same kind without them.
        within = [e for e in lacking if p.max_price is None or e.item.price <= p.max_price]
        others = [] if matches or alternatives else [e.item for e in sorted(within, key=rank) if e.item.stock > 0][:2]
        return {
            "items": [_public(i) for i in matches[: p.limit]],
            "total_matches": len(matches),
            "out_of_stock_matches": sum(1 for i in ranked if i.stock <= 0),
            "alternatives_over_budget": [_public(i) for i in alternatives],
            "alternatives_without_features": [_public(i) for i in others],
            "excluded_brands": skipped,
            "same_kind_instead": [_public(e.item) for e in sorted(instead, key=rank) if e.item.stock > 0][:3],
        } | (self.asked(p.question) if p.question else {})

    @staticmethod
    def _of_kind(pool: list[_Entry], category: str) -> list[_Entry]:
        kind, words = _canonical(category), _words(category)
        return [e for e in pool if e.category == kind or words <= e.name_words]

    def asked(self, question: str) -> dict:
        """What a question about items names in the inventory's data: attributes by their label
        ("weight", "back in stock") or by one of their values anywhere in the inventory ("wireless"
        is a connection, "black" a colour), and the words it says that the data knows nothing of."""
        said = _words(question) - _STEMMED_GENERIC
        # A word that names an attribute asks about it, not about a value elsewhere ("how heavy" is
        # the weight, whatever tag holds the word "weight").
        label_words = set().union(*(labels for labels, _ in self.vocabulary.values()))
        named: list[dict] = []
        for label, (labels, values) in self.vocabulary.items():
            named += [{"attribute": label, "value": None} for _ in sorted(said & labels)][:1]
            named += [{"attribute": label, "value": values[w]} for w in sorted((said - label_words) & set(values))]
        unknown = sorted(w for w in said - self.known if not w.isdigit() and len(w) > 2)
        return {"asked": named, "unknown_words": unknown}


@tool_factory
def inventory_tools(deps: ToolDeps) -> list[Tool]:
    inventory = deps.inventory
    if inventory is None:
        return []
    index: InventoryQuery | None = None

    async def inventory_query(p: InventoryParams, ctx: ToolContext) -> ToolOutput:
        nonlocal index
        items = await inventory.items()
        if index is None or index.items is not items:  # rebuilt only when the source hands out new items
            index = await asyncio.to_thread(InventoryQuery, items)
        if len(items) > INLINE_ITEMS:
            # A big inventory takes milliseconds per query: off the event loop.
            return ToolOutput(data=await asyncio.to_thread(index.run, p))
        return ToolOutput(data=index.run(p))

    return [
        Tool(
            "inventory_query",
            "Search the store's inventory by category, budget, brand, features, SKU or name. Read-only.",
            InventoryParams,
            inventory_query,
        )
    ]
