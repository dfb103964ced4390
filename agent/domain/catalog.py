"""What a store sells and what it knows: inventory items and knowledge-base sections.

Adapters in `adapters/data/` read them from files through the schema mapping in
`config/store.yaml`; the tools in `agent/tools/` query them. Nothing here names a category.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, model_validator

from agent.config.files import load_yaml_model
from agent.config.schema import AssistantSettings, Strict
from agent.domain.types import Model


class Item(Model):
    sku: str
    name: str
    category: str
    brand: str = ""
    price: float = Field(ge=0)
    stock: int = 0
    attributes: dict[str, str] = Field(default_factory=dict)


class KBSection(Model):
    """One heading of a knowledge-base document: the unit the search ranks and cites."""

    ref: str  # "<file name>#<anchor>", what an answer cites
    title: str  # the document's title
    heading: str
    text: str
    steps: list[str] = Field(default_factory=list)  # the section's list items, in order


class InventoryColumns(Strict):
    """Source column (CSV header or JSON key) for each field of an Item."""

    sku: str = "sku"
    name: str = "name"
    category: str = "category"
    brand: str = "brand"
    price: str = "price"
    stock: str = "stock"


class InventorySpec(Strict):
    file: str = "inventory.csv"  # relative to the data folder; .csv or .json (a list of objects)
    columns: InventoryColumns = Field(default_factory=InventoryColumns)
    # Source columns that become item attributes (features the customer can ask for), by label.
    attributes: dict[str, str] = Field(default_factory=dict)
    # Other words customers ask about an attribute with ("color", "how heavy"), each -> its label.
    attribute_words: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _words_name_attributes(self) -> InventorySpec:
        unknown = sorted(label for label in self.attribute_words.values() if label not in self.attributes)
        if unknown:
            raise ValueError(f"attribute_words must name an attribute label; not one: {', '.join(unknown)}")
        return self


class StoreSettings(Strict):
    """config/store.yaml: the store's data files and how to read them."""

    name: str = "our store"  # how the bot names the store
    currency: str = "$"  # the symbol every price, refund and policy reason is written with
    inventory: InventorySpec = Field(default_factory=InventorySpec)
    knowledge_base: str = "kb"  # folder of *.md files, relative to the data folder
    max_recommendations: int = Field(3, ge=1, le=10)  # items one recommendation lists
    # Slot name -> item field whose distinct values extend that slot's lookup list.
    slot_values: dict[str, str] = Field(default_factory=dict)
    assistant: AssistantSettings = Field(default_factory=AssistantSettings)


def load_store_settings(config_dir: str | Path) -> StoreSettings:
    return load_yaml_model(Path(config_dir) / "store.yaml", StoreSettings, optional=True)
