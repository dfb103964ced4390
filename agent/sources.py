"""The business data the core reads, as Protocols its adapters (adapters/data/) implement: orders and
customers, releases, the store's items and its knowledge base."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from agent.domain.catalog import Item, KBSection


@runtime_checkable
class DataSource(Protocol):
    """Business data the tools read: orders and customers."""

    async def get_order(self, order_id: str) -> dict[str, Any] | None: ...

    async def get_customer(self, customer_id: str) -> dict[str, Any] | None: ...

    async def orders_of(self, customer_id: str) -> list[dict[str, Any]]:
        """The customer's own orders, as `get_order` returns each, in the data's order: what "my
        keyboard" or "the one from that brand" is looked up among."""
        ...

    async def find_customer(self, platform: str, user_id: str) -> dict[str, Any] | None:
        """The customer whose chat identity on `platform` (slack, discord) is `user_id`."""
        ...


class ReleaseSource(Protocol):
    """Release summaries for the release-risk agent (a JSON file, or an HTTP endpoint)."""

    async def get_release(self, release_id: str) -> dict[str, Any] | None:
        """The summary, or None if there is no such release. Raises DataSourceError if unreachable."""
        ...

    async def list_releases(self) -> list[str]:
        """Every release id it holds (empty when the source cannot list). Raises DataSourceError if unreachable."""
        ...


@runtime_checkable
class Inventory(Protocol):
    """The store's items, already mapped from its source columns (config/store.yaml)."""

    async def items(self) -> list[Item]: ...


@runtime_checkable
class KnowledgeSource(Protocol):
    """The store's knowledge base, split into citable sections."""

    async def sections(self) -> list[KBSection]: ...
