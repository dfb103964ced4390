"""`inventory_query`: filter and rank the store's items. Read-only; every price and stock figure
the sales agent says comes from here."""

from __future__ import annotations

from pydantic import Field

from agent.catalog import Item
from agent.interfaces import Inventory, ToolContext
from agent.tools.registry import Tool, ToolOutput, ToolParams
from agent.understanding.text import STOPWORDS, stem

# Words of a product question that say nothing about which product.
_GENERIC = STOPWORDS | {"stock", "available", "availability", "carry", "sell", "left", "one", "item", "product"}


class InventoryParams(ToolParams):
    category: str | None = Field(None, max_length=100, description="e.g. laptop, tent")
    max_price: float | None = Field(None, ge=0, description="budget ceiling")
    min_price: float | None = Field(None, ge=0)
    brand: str | None = Field(None, max_length=100)
    exclude_brands: list[str] = Field(default_factory=list, max_length=50)
    prefer_brands: list[str] = Field(default_factory=list, max_length=50)
    features: list[str] = Field(default_factory=list, max_length=20, description="attribute words, e.g. wireless")
    sku: str | None = Field(None, max_length=100)
    query: str | None = Field(None, max_length=300, description="free text naming a product")
    in_stock_only: bool = False
    limit: int = Field(3, ge=1, le=10)


def _words(text: str) -> set[str]:
    return {stem(w) for w in "".join(c if c.isalnum() else " " for c in text.lower()).split()}


# Plurals the suffix stemmer cannot undo.
_IRREGULAR = {"mice": "mouse", "knives": "knife", "shelves": "shelf", "feet": "foot"}


def _canonical(word: str) -> str:
    word = word.strip().lower()
    return stem(_IRREGULAR.get(word, word))


def _same(a: str, b: str) -> bool:
    return _canonical(a) == _canonical(b)


def _public(item: Item) -> dict:
    return item.model_dump() | {"in_stock": item.stock > 0}


class InventoryQuery:
    """Filters in a fixed order (sku/query, category, brand, price, features), then ranks."""

    def __init__(self, items: list[Item]):
        self.items = items

    def _text_matches(self, query: str) -> list[Item]:
        wanted = _words(query) - {stem(w) for w in _GENERIC}
        if not wanted:
            return []
        scored = []
        for item in self.items:
            have = _words(f"{item.sku} {item.name} {item.brand} {item.category}")
            hits = len(wanted & have)
            if hits:
                scored.append((hits, item))
        best = max((h for h, _ in scored), default=0)
        return [i for h, i in scored if h == best]

    def run(self, p: InventoryParams) -> dict:
        pool = self.items
        if p.sku:
            pool = [i for i in pool if i.sku.lower() == p.sku.lower()]
        if p.query:
            pool = [i for i in InventoryQuery(pool)._text_matches(p.query)]
        if p.category:
            words = _words(p.category)
            pool = [i for i in pool if _same(i.category, p.category) or words <= _words(i.name)]
        if p.brand:
            pool = [i for i in pool if _same(i.brand, p.brand)]
        excluded = {b.lower() for b in p.exclude_brands}
        skipped = sorted({i.brand for i in pool if i.brand.lower() in excluded})
        pool = [i for i in pool if i.brand.lower() not in excluded]
        if p.min_price is not None:
            pool = [i for i in pool if i.price >= p.min_price]
        over = [i for i in pool if p.max_price is not None and i.price > p.max_price]
        if p.max_price is not None:
            pool = [i for i in pool if i.price <= p.max_price]
        wanted = [_words(f) for f in p.features]

        def feature_hits(item: Item) -> int:
            have = _words(" ".join([item.name, *item.attributes.keys(), *item.attributes.values()]))
            return sum(1 for w in wanted if w <= have)

        preferred = {b.lower() for b in p.prefer_brands}
        # In stock first, then more of the asked-for features, a preferred brand, and the higher
        # price within budget (the most capable option the customer said they can afford).
        pool.sort(key=lambda i: (i.stock <= 0, -feature_hits(i), i.brand.lower() not in preferred, -i.price))
        matches = [i for i in pool if i.stock > 0] if p.in_stock_only else pool
        alternatives = sorted((i for i in over if i.stock > 0), key=lambda i: i.price)[:2] if not matches else []
        return {
            "items": [_public(i) for i in matches[: p.limit]],
            "total_matches": len(matches),
            "out_of_stock_matches": sum(1 for i in pool if i.stock <= 0),
            "alternatives_over_budget": [_public(i) for i in alternatives],
            "excluded_brands": skipped,
        }


def inventory_tools(inventory: Inventory) -> list[Tool]:
    async def inventory_query(p: InventoryParams, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(data=InventoryQuery(await inventory.items()).run(p))

    return [
        Tool(
            "inventory_query",
            "Search the store's inventory by category, budget, brand, features, SKU or name. Read-only.",
            InventoryParams,
            inventory_query,
        )
    ]
