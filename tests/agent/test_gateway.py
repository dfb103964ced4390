"""The tool gateway: permissions, schema validation, timeouts and idempotency, on a real store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from pydantic import Field

from adapters.data.json_source import JSONDataSource
from adapters.storage.sql import SqlStore
from agent.conversation.session import SessionState
from agent.domain.contexts import ToolContext
from agent.domain.records import TurnRecord
from agent.domain.types import ToolCall
from agent.tools import Tool, ToolOutput
from agent.tools.gateway import ToolGateway, idempotency_key
from agent.tools.orders import support_tools
from agent.tools.registry import ToolDeps, ToolParams
from tests.helpers import REPO

CTX = ToolContext(session_id="s", interaction_id="i-1", agent="support", intent_id="create_ticket")


class SleepParams(ToolParams):
    seconds: float = Field(ge=0)


async def sleepy(p: SleepParams, ctx: ToolContext) -> ToolOutput:
    await asyncio.sleep(p.seconds)
    return ToolOutput(data={"slept": p.seconds})


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[SqlStore]:
    s = SqlStore(db_url)
    yield s
    await s.aclose()


@pytest.fixture
def gateway(store: SqlStore) -> ToolGateway:
    found = support_tools(ToolDeps(data=JSONDataSource(REPO / "data")))
    tools = [*found, Tool("sleep", "Sleeps.", SleepParams, sleepy, timeout=0.05)]
    return ToolGateway(tools, {"support": ["check_order_status", "create_ticket", "sleep"], "sales": []}, store)


async def test_an_agent_cannot_use_a_tool_outside_its_permissions(gateway: ToolGateway) -> None:
    result = await gateway.execute(
        ToolCall(tool_name="check_order_status", params={"order_id": "O-12345"}),
        CTX.model_copy(update={"agent": "sales"}),
    )
    assert not result.success and result.error_code == "not_allowed"


async def test_arguments_are_validated_against_the_schema(gateway: ToolGateway) -> None:
    result = await gateway.execute(ToolCall(tool_name="check_order_status", params={"order_id": "12345; DROP"}), CTX)
    assert not result.success and result.error_code == "invalid_arguments"
    assert "order_id" in (result.error or "")
    extra = await gateway.execute(ToolCall(tool_name="check_order_status", params={"order_id": "O-1", "x": 1}), CTX)
    assert extra.error_code == "invalid_arguments"


async def test_unknown_tool(gateway: ToolGateway) -> None:
    result = await gateway.execute(ToolCall(tool_name="launch_rockets"), CTX)
    assert result.error_code == "unknown_tool"


async def test_a_slow_tool_times_out(gateway: ToolGateway) -> None:
    result = await gateway.execute(ToolCall(tool_name="sleep", params={"seconds": 5}), CTX)
    assert not result.success and result.error_code == "timeout"


async def test_not_found_is_a_clean_failure(gateway: ToolGateway) -> None:
    result = await gateway.execute(ToolCall(tool_name="check_order_status", params={"order_id": "O-99999"}), CTX)
    assert (result.success, result.error_code, result.error) == (
        False,
        "not_found",
        "check_order_status: Order O-99999 not found",
    )


async def test_a_side_effect_runs_once_per_idempotency_key(gateway: ToolGateway, store: SqlStore) -> None:
    call = ToolCall(tool_name="create_ticket", params={"summary": "Mug arrived chipped"})
    first = await gateway.execute(call, CTX)
    assert first.success and first.idempotency_key == idempotency_key(CTX, call) and len(first.effects) == 1
    state = SessionState(session_id="s", version=1)
    await store.commit(
        TurnRecord(
            state=state,
            expected_version=0,
            messages=[],
            events=[],
            effects=first.effects,
            ledger={first.idempotency_key: first},
        )
    )
    # The same turn retried (another interaction id): answered from the ledger, nothing new written.
    again = await gateway.execute(call, CTX.model_copy(update={"interaction_id": "i-2"}))
    assert again.replayed and again.data == first.data
    await store.commit(
        TurnRecord(
            state=state.model_copy(update={"version": 2}),
            expected_version=1,
            messages=[],
            events=[],
            effects=again.effects,
        )
    )
    assert (await store.fetch("SELECT count(*) AS n FROM tickets"))[0].n == 1
    different = await gateway.execute(ToolCall(tool_name="create_ticket", params={"summary": "Another problem"}), CTX)
    assert not different.replayed and different.data != first.data


def test_schemas_list_only_the_agents_tools(gateway: ToolGateway) -> None:
    names = [s["name"] for s in gateway.schemas("support")]
    assert names == ["check_order_status", "create_ticket", "sleep"]
    order = gateway.schemas("support")[0]["parameters"]
    assert order["required"] == ["order_id"] and order["properties"]["order_id"]["pattern"]
