"""The store's files: an inventory (CSV or JSON, mapped by config/store.yaml) and a Markdown knowledge base.

Both are read once at startup, so a bad row or a missing column stops the program with the file
and row named, instead of surfacing mid-conversation.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent.domain.catalog import InventorySpec, Item, KBSection
from agent.errors import ConfigError

_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*#*\s*$")
_STEP = re.compile(r"^\s*(?:\d+[.)]|[-*+])\s+(.+)$")


def _number(raw: Any, file: str, row: int, field: str) -> float:
    if isinstance(raw, int | float):
        return float(raw)
    text = re.sub(r"[^\d.\-]", "", str(raw or ""))  # "$1,290.00" and "1 290" read as numbers
    try:
        return float(text)
    except ValueError as e:
        raise ConfigError(file, f"row {row}: {field} {raw!r} is not a number", field=field) from e


class FileInventory:
    """
    Args:
        data_dir: the store's data folder.
        spec: the file name, the column for each item field and the attribute columns.
    """

    def __init__(self, data_dir: str | Path, spec: InventorySpec):
        self.path = Path(data_dir) / spec.file
        self.spec = spec
        self._items = self._load() if self.path.exists() else []

    def _rows(self) -> list[dict[str, Any]]:
        text = self.path.read_text(encoding="utf-8-sig")
        if self.path.suffix.lower() == ".json":
            try:
                rows = json.loads(text)
            except json.JSONDecodeError as e:
                raise ConfigError(str(self.path), f"not valid JSON ({e.msg})", line=e.lineno) from e
            if isinstance(rows, dict):  # {"items": [...]} or {sku: {...}}
                rows = rows.get("items", list(rows.values()))
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                raise ConfigError(str(self.path), "expected a list of objects")
            return rows
        return list(csv.DictReader(text.splitlines()))

    def _load(self) -> list[Item]:
        file, cols = str(self.path), self.spec.columns
        items = []
        for n, row in enumerate(self._rows(), start=1):
            missing = [c for c in (cols.sku, cols.name, cols.price) if c not in row]
            if missing:
                raise ConfigError(file, f"row {n}: no column {missing[0]!r} (see config store.yaml inventory.columns)")
            try:
                items.append(
                    Item(
                        sku=str(row[cols.sku]).strip(),
                        name=str(row[cols.name]).strip(),
                        category=str(row.get(cols.category, "")).strip().lower(),
                        brand=str(row.get(cols.brand, "")).strip(),
                        price=_number(row[cols.price], file, n, cols.price),
                        stock=int(_number(row.get(cols.stock, 0), file, n, cols.stock)),
                        attributes={
                            label: str(row[col]).strip()
                            for label, col in self.spec.attributes.items()
                            if row.get(col) not in (None, "")
                        },
                    )
                )
            except ValidationError as e:
                raise ConfigError(file, f"row {n}: {e.errors()[0]['msg']}") from e
        return items

    async def items(self) -> list[Item]:
        return self._items

    def distinct(self, field: str) -> list[str]:
        """Sorted distinct values of an item field (the lookup lists understanding draws from the data)."""
        return sorted({str(getattr(i, field)) for i in self._items if getattr(i, field)})

    def kinds(self) -> dict[str, str]:
        """Each product name with its category ("Logitech G502 HERO" -> "mouse")."""
        return {i.name: i.category for i in self._items if i.name and i.category}


def _anchor(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def parse_markdown(name: str, text: str) -> list[KBSection]:
    """Split a document at its headings; each section keeps its list items as steps."""
    title = name
    sections: list[KBSection] = []
    heading, lines = "", list[str]()

    def flush() -> None:
        body = "\n".join(lines).strip()
        if body:
            steps = [m.group(1).strip() for line in lines if (m := _STEP.match(line))]
            ref = f"{name}#{_anchor(heading)}" if heading else name
            sections.append(KBSection(ref=ref, title=title, heading=heading or title, text=body, steps=steps))

    for line in text.splitlines():
        m = _HEADING.match(line)
        if m and len(m.group(1)) == 1 and not sections and not lines:
            title = m.group(2)
            continue
        if m:
            flush()
            heading, lines = m.group(2), []
        else:
            lines.append(line)
    flush()
    return sections


class MarkdownKnowledgeBase:
    """
    Args:
        directory: a folder of `*.md` files; `#` is the title, `##`/`###` headings split sections.
    """

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        files = sorted(self.directory.glob("*.md")) if self.directory.is_dir() else []
        self._sections = [s for f in files for s in parse_markdown(f.name, f.read_text(encoding="utf-8"))]

    async def sections(self) -> list[KBSection]:
        return self._sections
