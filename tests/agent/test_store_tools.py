"""inventory_query and knowledge_base_search on the shipped store's real data."""

from __future__ import annotations

import pytest

from adapters.data.store_files import FileInventory, MarkdownKnowledgeBase
from agent.domain.catalog import load_store_settings
from agent.domain.contexts import ToolContext
from agent.tools.inventory import InventoryParams, InventoryQuery, inventory_tools
from agent.tools.knowledge import KBSearchParams, knowledge_tools
from agent.tools.registry import ToolDeps
from tests.helpers import REPO

CTX = ToolContext(session_id="s", interaction_id="i", agent="sales")


@pytest.fixture
async def query() -> InventoryQuery:
    inv = FileInventory(REPO / "data", load_store_settings(REPO / "config").inventory)
    return InventoryQuery(await inv.items())


def skus(result: dict) -> list[str]:
    return [i["sku"] for i in result["items"]]


def test_budget_category_and_stock_filters(query: InventoryQuery) -> None:
    r = query.run(InventoryParams(category="mice", max_price=1500, in_stock_only=True, limit=3))
    assert skus(r) == ["MS-102", "MS-107", "MS-101"]  # highest price within budget first
    assert r["total_matches"] == 4  # HyperX too; the out-of-stock SteelSeries is not a match


def test_in_stock_first_when_out_of_stock_items_are_allowed(query: InventoryQuery) -> None:
    r = query.run(InventoryParams(category="laptop", max_price=35000, limit=10))
    stocks = [i["stock"] for i in r["items"]]
    assert stocks == sorted(stocks, key=lambda s: s <= 0) and stocks[-1] == 0
    assert {"LT-203", "LT-206"} <= set(skus(r))


def test_excluded_and_preferred_brands_and_features(query: InventoryQuery) -> None:
    r = query.run(InventoryParams(category="mouse", max_price=1500, exclude_brands=["razer"], in_stock_only=True))
    assert "Razer" not in {i["brand"] for i in r["items"]} and r["excluded_brands"] == ["Razer"]
    preferred = query.run(
        InventoryParams(category="mouse", max_price=1500, prefer_brands=["HyperX"], in_stock_only=True)
    )
    assert skus(preferred)[0] == "MS-105"
    wireless = query.run(InventoryParams(category="mouse", features=["wireless"], in_stock_only=True))
    assert skus(wireless) == ["MS-103", "MS-106"]  # a feature asked for is a must: no wired mouse
    liked = query.run(InventoryParams(category="mouse", prefer_features=["wireless"], in_stock_only=True))
    assert skus(liked)[:2] == ["MS-103", "MS-106"] and len(skus(liked)) == 3  # a liked one only ranks


def test_a_feature_nothing_has_offers_the_same_kind_without_it(query: InventoryQuery) -> None:
    r = query.run(InventoryParams(category="monitor", features=["wireless"], max_price=20000, in_stock_only=True))
    assert r["items"] == [] and r["alternatives_over_budget"] == []
    assert {a["sku"] for a in r["alternatives_without_features"]} == {"MN-401", "MN-402"}


def test_nothing_within_budget_offers_the_cheapest_in_stock_alternatives(query: InventoryQuery) -> None:
    r = query.run(InventoryParams(category="keyboard", max_price=1000, in_stock_only=True))
    assert r["items"] == [] and [a["sku"] for a in r["alternatives_over_budget"]] == ["KB-301", "KB-303"]


def test_a_name_query_finds_the_product_and_an_unknown_one_finds_nothing(query: InventoryQuery) -> None:
    assert skus(query.run(InventoryParams(query="is the logitech g502 in stock"))) == ["MS-101"]
    assert query.run(InventoryParams(query="Alienware X17"))["items"] == []
    # A make and model must match whole; a free-text question takes the best partial match.
    assert query.run(InventoryParams(query="razer viper", whole_name=True))["items"] == []
    assert skus(query.run(InventoryParams(query="razer deathadder", whole_name=True))) == ["MS-102"]
    assert skus(query.run(InventoryParams(sku="lt-202"))) == ["LT-202"]


async def test_inventory_tool_caps_results() -> None:
    inv = FileInventory(REPO / "data", load_store_settings(REPO / "config").inventory)
    [tool] = inventory_tools(ToolDeps(inventory=inv))
    out = await tool.handler(InventoryParams(limit=2), CTX)
    assert len(out.data["items"]) == 2 and out.data["total_matches"] > 2


async def test_knowledge_search_ranks_the_matching_section_first_with_its_reference() -> None:
    [tool] = knowledge_tools(ToolDeps(knowledge=MarkdownKnowledgeBase(REPO / "data" / "kb")))
    out = await tool.handler(KBSearchParams(query="laptop Lenovo Legion freezes when gaming"), CTX)
    hits = out.data["hits"]
    assert hits[0]["ref"] == "laptop-freezing.md#freezes-when-gaming"
    assert hits[0]["steps"][0] == "Save your work and restart the laptop."
    assert all(h["score"] > 0 for h in hits) and len(hits) <= 3
    frozen = await tool.handler(KBSearchParams(query="screen is frozen Dell"), CTX)
    assert frozen.data["hits"][0]["ref"] == "laptop-freezing.md#screen-frozen-or-not-responding"
    none = await tool.handler(KBSearchParams(query="quantum entanglement"), CTX)
    assert none.data["hits"] == []


def test_several_skus_come_back_in_the_order_asked_whatever_the_free_text(query: InventoryQuery) -> None:
    r = query.run(InventoryParams(skus=["MS-107", "MS-102"], query="is the second one wireless?", limit=2))
    assert skus(r) == ["MS-107", "MS-102"]


@pytest.mark.parametrize(
    ("config", "data", "sku", "question", "asked", "unknown"),
    [
        # A value names its attribute across the inventory: "wireless" is a connection even for a wired item.
        ("config", "data", "MS-102", "is wireless", {("connection", "wireless"), ("features", "wireless")}, []),
        ("config", "data", "MS-102", "does come in pink", {("colours", "pink")}, ["come"]),
        ("config", "data", "MS-104", "when will be back", {("expected back", None)}, ["when"]),
        ("config", "data", "KB-301", "is waterproof", set(), ["waterproof"]),
        ("config/stores/outdoor", "data/stores/outdoor", "TN-10", "is waterproof", {("features", "waterproof")}, []),
        (
            "config/stores/outdoor",
            "data/stores/outdoor",
            "SB-21",
            "good for winter",
            {("season", "winter"), ("features", "winter")},
            ["good"],
        ),
    ],
)
async def test_a_question_names_attributes_from_the_stores_data(
    config: str, data: str, sku: str, question: str, asked: set, unknown: list[str]
) -> None:
    inv = FileInventory(REPO / data, load_store_settings(REPO / config).inventory)
    r = InventoryQuery(await inv.items()).run(InventoryParams(sku=sku, question=question))
    assert skus(r) == [sku]
    assert {(a["attribute"], a["value"]) for a in r["asked"]} == asked
    assert r["unknown_words"] == unknown
