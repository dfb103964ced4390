"""`math_evaluate`: arithmetic only, with clear refusals for code, huge powers and long input."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from adapters.storage.sql import SqlStore
from agent.domain.contexts import ToolContext
from agent.domain.types import ToolCall
from agent.errors import ToolError
from agent.tools.calculator import evaluate, math_evaluate
from agent.tools.gateway import ToolGateway

CTX = ToolContext(session_id="s", interaction_id="i", agent="sales", intent_id="recommend_item")


@pytest.fixture
async def gateway(db_url: str) -> AsyncIterator[ToolGateway]:
    store = SqlStore(db_url)
    yield ToolGateway([math_evaluate], {"sales": ["math_evaluate"], "tasks": []}, store)
    await store.aclose()


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("1290 + 2490", 3780),
        ("(32990 - 27990) / 2", 2500),
        ("1,290 * 3", 3870),
        ("2^10", 1024),
        ("-5 % 3", 1),
        ("round(35000 * 0.93, 2)", 32550.0),
        ("max(1, 7, 3) + sqrt(16)", 11.0),
    ],
)
def test_arithmetic(expression: str, value: float) -> None:
    assert evaluate(expression) == value


@pytest.mark.parametrize(
    ("expression", "code", "reason"),
    [
        ("__import__('os')", "invalid_expression", "call is not allowed"),
        ("().__class__.__bases__", "invalid_expression", "not allowed"),
        ("open('/etc/passwd')", "invalid_expression", "not allowed"),
        ("x + 1", "invalid_expression", "name is not allowed"),
        ("9**9**9", "too_large", "exponent 387420489 is larger than 100"),
        ("10.0**99 * 10.0**99", "too_large", "too large"),
        ("1/0", "invalid_expression", "division by zero"),
        ("1 +", "invalid_expression", "not an arithmetic expression"),
        ("'a' * 3", "invalid_expression", "not allowed"),
        ("1" * 10240, "too_long", "10240 characters; the limit is 200"),
    ],
)
def test_refusals_say_why(expression: str, code: str, reason: str) -> None:
    with pytest.raises(ToolError) as e:
        evaluate(expression)
    assert e.value.code == code
    assert reason in str(e.value)


async def test_through_the_gateway_a_refusal_is_a_failed_result_with_the_reason(gateway: ToolGateway) -> None:
    bad = await gateway.execute(ToolCall(tool_name="math_evaluate", params={"expression": "__import__('os')"}), CTX)
    assert not bad.success and bad.error_code == "invalid_expression" and "not allowed" in (bad.error or "")
    long = await gateway.execute(ToolCall(tool_name="math_evaluate", params={"expression": "9" * 10240}), CTX)
    assert not long.success and long.error_code == "too_long"
    ok = await gateway.execute(ToolCall(tool_name="math_evaluate", params={"expression": "1490 * 2"}), CTX)
    assert ok.success and ok.data == {"expression": "1490 * 2", "value": 2980}
    denied = await gateway.execute(
        ToolCall(tool_name="math_evaluate", params={"expression": "1+1"}), CTX.model_copy(update={"agent": "tasks"})
    )
    assert denied.error_code == "not_allowed"
