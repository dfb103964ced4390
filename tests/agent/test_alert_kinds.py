"""Admin alert kinds: a tool declares the kinds it raises, and every kind has its title in agents.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.storage.sql import SqlStore
from agent.config.files import load_config
from agent.domain.contexts import ToolContext
from agent.domain.types import Alert, CoreAlert, ToolCall
from agent.tools.gateway import ToolGateway
from agent.tools.registry import Tool, ToolOutput, ToolParams
from bots.app import build_app
from tests.helpers import REPO


@pytest.mark.parametrize("config", [REPO / "config", REPO / "config" / "stores" / "outdoor"])
async def test_every_kind_raised_has_a_title(config: Path, db_url: str) -> None:
    titles = load_config(config).agents.alerts
    async with build_app(config, REPO / "data", db_url) as app:
        declared = {kind for tool in app.tools.tools.values() for kind in tool.alerts}  # type: ignore[attr-defined]
    assert "risk_report" in declared or config.name == "outdoor"
    missing = ({k.value for k in CoreAlert} | declared) - set(titles)
    assert not missing, f"alert kinds without a title in {config}/agents.yaml: {sorted(missing)}"


class Nothing(ToolParams):
    pass


async def test_an_alert_the_tool_did_not_declare_fails_the_run(db_url: str) -> None:
    async def shout(p: Nothing, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(alerts=[Alert(kind="stock_low", session_id=ctx.session_id, summary="low")])

    quiet = Tool("shout", "raises an alert", Nothing, shout)
    declared = Tool("shout", "raises an alert", Nothing, shout, alerts=("stock_low",))
    context = ToolContext(session_id="s-1", interaction_id="i-1", agent="ops")
    store = SqlStore(db_url)
    for tool, ok in ((quiet, False), (declared, True)):
        gateway = ToolGateway([tool], {"ops": ["shout"]}, store)
        result = await gateway.execute(ToolCall(tool_name="shout", params={}), context)
        assert result.success is ok
        assert result.error_code == (None if ok else "undeclared_alert")
        assert [a.kind for a in result.alerts] == (["stock_low"] if ok else [])
    await store.aclose()


def test_alert_kinds_are_words() -> None:
    with pytest.raises(ValueError):
        Alert(kind="Stock Low!", session_id="s", summary="x")
