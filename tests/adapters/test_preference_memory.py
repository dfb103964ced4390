"""Preference memory: SQL on a real SQLite file, and Zep through the real SDK against a stand-in."""

from __future__ import annotations

import pytest

from adapters.memory.sql_memory import SqlPreferenceMemory
from adapters.memory.zep import METADATA_KEY, ZepPreferenceMemory
from adapters.storage.sql import SqlStore
from agent.domain.records import Preferences
from agent.errors import ProviderAuthError, ProviderUnavailable
from agent.storage import PreferenceMemory
from tests.zep_standin import zep_standin


async def test_sql_memory_merges_updates_per_customer(db_url: str) -> None:
    memory = SqlPreferenceMemory(db_url)
    assert isinstance(memory, PreferenceMemory)
    try:
        assert await memory.read("C-001") == Preferences()
        await memory.write("C-001", Preferences(disliked_brands=["Razer"], budget_range=(0, 1500)))
        await memory.write("C-001", Preferences(preferred_brands=["Logitech"], communication_style="brief"))
        await memory.write("C-002", Preferences(preferred_brands=["Razer"]))
        got = await memory.read("C-001")
        assert got.disliked_brands == ["Razer"] and got.preferred_brands == ["Logitech"]
        assert got.budget_range == (0, 1500) and got.communication_style == "brief"
        # Changing one's mind: liking a disliked brand moves it.
        await memory.write("C-001", Preferences(preferred_brands=["razer"]))
        assert (await memory.read("C-001")).disliked_brands == []
    finally:
        await memory.aclose()


async def test_sql_memory_empty_update_writes_nothing(db_url: str) -> None:
    memory = SqlPreferenceMemory(db_url)
    store = SqlStore(db_url)
    try:
        await memory.write("C-009", Preferences())
        await memory.write("C-001", Preferences(preferred_features=["quiet"]))
        before = await store.fetch("SELECT customer_id, updated_at FROM customer_preferences")
        await memory.write("C-001", Preferences())
        await memory.write("C-001", Preferences(preferred_features=["quiet"]))  # nothing new either
        after = await store.fetch("SELECT customer_id, updated_at FROM customer_preferences")
        assert [tuple(r) for r in before] == [tuple(r) for r in after] and len(after) == 1
    finally:
        await memory.aclose()
        await store.aclose()


async def test_zep_memory_creates_reads_and_merges_through_the_real_sdk() -> None:
    async with zep_standin() as zep:
        memory = ZepPreferenceMemory("z-test-key", base_url=zep.base_url)
        assert isinstance(memory, PreferenceMemory)
        try:
            assert await memory.read("C-001") == Preferences()
            await memory.write("C-001", Preferences(disliked_brands=["Razer"]))
            await memory.write("C-001", Preferences(preferred_features=["wireless"]))
            [user] = zep.users.values()
            assert user["user_id"] == "C-001"
            assert user["metadata"][METADATA_KEY]["disliked_brands"] == ["Razer"]
            got = await memory.read("C-001")
            assert got.disliked_brands == ["Razer"] and got.preferred_features == ["wireless"]
            assert [m for m, _ in zep.calls].count("PATCH") == 1 and [p for _, p in zep.calls].count(
                "/api/v4/users"
            ) == 1
            calls = len(zep.calls)
            await memory.write("C-001", Preferences())  # an empty update makes no call
            assert len(zep.calls) == calls
        finally:
            await memory.aclose()


async def test_zep_errors_become_provider_errors() -> None:
    async with zep_standin() as zep:
        wrong_key = ZepPreferenceMemory("not-the-key", base_url=zep.base_url)
        try:
            with pytest.raises(ProviderAuthError, match="ZEP_API_KEY"):
                await wrong_key.read("C-001")
        finally:
            await wrong_key.aclose()
        zep.fail_with = 503
        memory = ZepPreferenceMemory("z-test-key", base_url=zep.base_url)
        try:
            with pytest.raises(ProviderUnavailable) as e:
                await memory.write("C-001", Preferences(disliked_brands=["HP"]))
            assert e.value.retryable
        finally:
            await memory.aclose()
