"""Records of a kind without a table of their own: written in the turn's transaction, once per kind
and key, read back by their owner, on a real SQLite file and on PostgreSQL when the machine has one."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from adapters.storage.records import SqlRecords
from adapters.storage.sql import SqlStore
from agent.conversation.session import SessionState
from agent.domain.records import TelemetryEvent, TurnRecord
from agent.domain.types import Message, SideEffect
from agent.errors import ReferenceCollision, VersionConflict


@pytest.fixture
async def store(any_db_url: str) -> AsyncIterator[SqlStore]:
    s = SqlStore(any_db_url)
    yield s
    await s.aclose()


def voucher(key: str, points: int, owner: str | None = "C-001") -> SideEffect:
    return SideEffect(kind="voucher", key=key, data={"points": points, "note": "gift"}, owner=owner)


def turn(session: str, version: int, *effects: SideEffect) -> TurnRecord:
    return TurnRecord(
        state=SessionState(session_id=session, version=version),
        expected_version=version - 1,
        messages=[Message(role="user", text=f"turn {version}")],
        events=[TelemetryEvent(session_id=session, interaction_id="i", stage="received")],
        effects=list(effects),
    )


async def test_records_are_read_back_by_their_owner_oldest_first(store: SqlStore) -> None:
    await store.commit(turn("monday", 1, voucher("V-1", 500), voucher("V-2", 50, owner="C-002")))
    await store.commit(
        turn("friday", 1, voucher("V-3", 700), SideEffect(kind="stamp", key="V-3", data={}, owner="C-001"))
    )
    records = SqlRecords(store)

    mine = await records.find_records("voucher", "C-001")
    assert [(r.key, r.data["points"], r.session_id) for r in mine] == [("V-1", 500, "monday"), ("V-3", 700, "friday")]
    assert all(r.created_at.tzinfo is not None and r.kind == "voucher" for r in mine)
    assert [r.key for r in await records.find_records("voucher", "C-002")] == ["V-2"]
    assert [r.key for r in await records.find_records("voucher", "C-001", key="V-3")] == ["V-3"]
    assert await records.find_records("voucher", "C-001", key="V-2") == []  # C-002's, not theirs to read
    assert [r.kind for r in await records.find_records("stamp", "C-001")] == ["stamp"]  # kinds apart, one key


async def test_a_turn_that_loses_the_lock_writes_no_record(store: SqlStore) -> None:
    await store.commit(turn("s", 1))
    with pytest.raises(VersionConflict):
        await store.commit(turn("s", 1, voucher("V-1", 500)))  # another worker saved version 1 first
    assert await SqlRecords(store).find_records("voucher", "C-001") == []


async def test_a_replayed_turn_writes_its_record_once_and_another_conversations_key_collides(
    store: SqlStore,
) -> None:
    await store.commit(turn("s", 1, voucher("V-1", 500)))
    # A retried confirmation replays the ledger's result: its records come again, and are kept once.
    await store.commit(turn("s", 2, voucher("V-1", 500)))
    with pytest.raises(ReferenceCollision, match="voucher V-1 already belongs to another conversation"):
        await store.commit(turn("t", 1, voucher("V-1", 900, owner="C-002")))
    records = SqlRecords(store)
    assert [r.data["points"] for r in await records.find_records("voucher", "C-001")] == [500]
    assert await records.find_records("voucher", "C-002") == []
    assert (await store.load("t", 10))[0] is None  # nothing of the colliding turn was saved


@pytest.mark.parametrize("kind", ["refund", "order_update"])
async def test_a_kind_with_its_own_table_is_not_read_here(store: SqlStore, kind: str) -> None:
    with pytest.raises(ValueError, match=f"{kind} records have a table of their own"):
        await SqlRecords(store).find_records(kind, "C-001")
