"""The same store and router on a real PostgreSQL server (asyncpg), when the machine has one."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy.engine import make_url

from adapters.storage.inbox import SqlInbox
from adapters.storage.migrate import pending_changes_unit
from adapters.storage.sql import SqlStore
from agent.conversation.session import SessionState
from agent.domain.records import InboxEvent, TurnRecord
from agent.domain.types import Message
from agent.errors import SchemaBehind, VersionConflict
from bots.app import build_app
from tests.helpers import REPO, say
from tests.pg import unavailable_reason

pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")


@pytest.fixture(scope="module")
def pg_url(pg_server: str) -> str:
    """The server's default database, migrated the way a deploy does it (`agentbot db upgrade`)."""

    async def upgrade() -> None:
        store = SqlStore(pg_server)
        await store.upgrade()
        await store.aclose()

    asyncio.run(upgrade())
    return pg_server


async def test_postgres_is_migrated_only_on_command(pg_server: str) -> None:
    import asyncpg

    url = make_url(pg_server)
    admin = await asyncpg.connect(host=url.host, port=url.port, user=url.username, database="postgres")
    await admin.execute("CREATE DATABASE fresh")
    await admin.close()
    fresh = url.set(database="fresh").render_as_string(hide_password=False)
    store = SqlStore(fresh)
    with pytest.raises(SchemaBehind, match="not initialised, this agentbot needs .*: run `agentbot db upgrade`"):
        await store.load("s", 10)
    assert (await store.schema_status()).current is None
    status = await store.upgrade()
    assert status.current == status.head and not status.behind
    assert await store.load("s", 10) == (None, [])
    assert await store.run(pending_changes_unit, what="compare") == []
    await store.aclose()


async def test_conversation_and_conflict_on_postgres(pg_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", pg_url) as app:
        router = app.router
        first, _ = await say(router, "I want to check my order", session="pg-1")
        second, _ = await say(router, "o-12345", session="pg-1")
        ticket, _ = await say(router, "open a ticket: my parcel arrived wet", session="pg-2")
        assert first.missing_param == "order_id" and "shipped" in second.text
        assert ticket.tool_results[0].success
        rows = await app.store.fetch("SELECT count(*) AS n FROM tickets")  # type: ignore[attr-defined]
        assert rows[0].n == 1
        state, history = await app.store.load("pg-1", 10)
        assert state is not None and state.version == 2 and len(history) == 5
        assert all(m.timestamp.tzinfo is not None for m in history)
        stale = TurnRecord(state=state, expected_version=1, messages=[Message(role="user", text="x")], events=[])
        with pytest.raises(VersionConflict):
            await app.store.commit(stale)


async def test_inbox_accepts_a_key_once_under_concurrency(pg_url: str) -> None:
    store = SqlStore(pg_url)
    inbox = SqlInbox(store)
    event = InboxEvent(key="Ev-pg-1", session_key="pg-s", payload={"text": "hi"})
    results = await asyncio.gather(*(inbox.accept(event) for _ in range(5)))
    assert sorted(results) == [False, False, False, False, True]
    await store.commit(
        TurnRecord(
            state=SessionState(session_id="pg-s", version=1),
            expected_version=0,
            messages=[],
            events=[],
            inbox_key="Ev-pg-1",
        )
    )
    assert await inbox.unfinished(0) == []
    await store.aclose()


async def test_review_items_and_the_operator_views_on_postgres(pg_url: str) -> None:
    from adapters.storage.operator import OperatorViews
    from adapters.storage.review import SqlReview
    from agent.domain.types import utcnow

    async with build_app(REPO / "config", REPO / "data", pg_url) as app:
        await say(app.router, "nobody answered my emails for a week, write to ann@example.com", session="pg-rv")
        assert app.storage.database is not None
        review = SqlReview(app.storage.database)
        [item] = await review.items(session_id="pg-rv")
        assert "ann@example.com" not in item.text and item.kind in ("fallback", "out_of_scope")
        assert await review.settle(item.id, "labelled", "create_ticket")
        assert await review.items(session_id="pg-rv") == []
        views = OperatorViews(app.storage.database)
        conversation, turns = await views.conversation("pg-rv")
        assert conversation is not None and turns[0].lines[0].text.startswith("nobody answered")
        days = await views.days(None, utcnow().date())
        assert days[-1].turns >= 1 and days[-1].fallbacks >= 1
        assert [c.session_id for c in await views.conversations(None, "emails")] == ["pg-rv"]
