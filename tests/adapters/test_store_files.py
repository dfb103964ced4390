"""Store files: CSV and JSON inventories through the column mapping, and the Markdown knowledge base."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.data.store_files import FileInventory, MarkdownKnowledgeBase, parse_markdown
from agent.domain.catalog import InventorySpec, load_store_settings
from agent.errors import ConfigError
from tests.helpers import REPO


async def test_the_shipped_csv_inventory_maps_every_column() -> None:
    inv = FileInventory(REPO / "data", load_store_settings(REPO / "config").inventory)
    items = {i.sku: i for i in await inv.items()}
    mouse = items["MS-106"]
    assert (mouse.name, mouse.category, mouse.brand, mouse.price, mouse.stock) == (
        "Logitech MX Master 3S",
        "mouse",
        "Logitech",
        3590.0,
        5,
    )
    assert mouse.attributes == {
        "connection": "wireless",
        "weight": "141 g",
        "colours": "graphite pale-grey",
        "features": "office quiet ergonomic bluetooth",
    }
    assert "connection" not in items["LT-201"].attributes  # an empty cell is no attribute
    assert "Razer" in inv.distinct("brand")


async def test_the_outdoor_json_inventory_uses_its_own_column_names() -> None:
    spec = load_store_settings(REPO / "config" / "stores" / "outdoor").inventory
    items = {i.sku: i for i in await FileInventory(REPO / "data" / "stores" / "outdoor", spec).items()}
    tent = items["TN-10"]
    assert (tent.name, tent.category, tent.brand, tent.price, tent.stock) == (
        "MSR Hubba Hubba 2",
        "tent",
        "MSR",
        549.95,
        4,
    )
    assert tent.attributes["season"] == "3-season"


def test_a_bad_row_stops_startup_naming_the_file_and_row(tmp_path: Path) -> None:
    (tmp_path / "inventory.csv").write_text("sku,name,price\nA-1,Widget,12\nA-2,Gadget,twelve\n")
    with pytest.raises(ConfigError, match=r"inventory.csv: .*row 2: price 'twelve' is not a number"):
        FileInventory(tmp_path, InventorySpec())


def test_a_missing_mapped_column_is_named(tmp_path: Path) -> None:
    (tmp_path / "stock.json").write_text('[{"code": "A-1", "title": "Widget", "cost": "$1,290.50"}]')
    spec = InventorySpec.model_validate({"file": "stock.json", "columns": {"sku": "code", "name": "title"}})
    with pytest.raises(ConfigError, match="no column 'price'"):
        FileInventory(tmp_path, spec)


async def test_prices_written_with_symbols_read_as_numbers(tmp_path: Path) -> None:
    (tmp_path / "stock.json").write_text('{"items": [{"code": "A-1", "title": "Widget", "cost": "$1,290.50"}]}')
    spec = InventorySpec.model_validate(
        {"file": "stock.json", "columns": {"sku": "code", "name": "title", "price": "cost"}}
    )
    [item] = await FileInventory(tmp_path, spec).items()
    assert item.price == 1290.5 and item.stock == 0


def test_markdown_sections_keep_their_steps_and_references() -> None:
    sections = parse_markdown(
        "wifi.md",
        "# Wi-Fi help\n\nIntro text.\n\n## Keeps dropping\nTry this:\n1. Restart the router.\n2. Forget the network.\n",
    )
    assert [s.ref for s in sections] == ["wifi.md", "wifi.md#keeps-dropping"]
    assert sections[1].title == "Wi-Fi help" and sections[1].steps == ["Restart the router.", "Forget the network."]


async def test_a_missing_knowledge_base_folder_is_empty(tmp_path: Path) -> None:
    assert await MarkdownKnowledgeBase(tmp_path / "nope").sections() == []
