"""A project adds an intent with a tool of its own: one tool module and config lines, no agentbot edit.

The project here is a temporary folder holding a copy of the shipped config/ plus the lines the
recipe in docs/tools.md adds, and one module under tools/. A conversation reaches the new tool
through the real router, and the tool's declaration (a side effect that needs a yes, a new kind of
record) is obeyed: its vouchers are kept without a migration, on SQLite and PostgreSQL, and a later
conversation's run reads them back.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.storage.records import SqlRecords
from adapters.storage.sql import SqlStore
from agent.app import App
from agent.domain.types import SideEffect, ToolCall
from agent.errors import ConfigError
from agent.tools import ToolContext, ToolDeps, ToolOutput, ToolParams, tool
from agent.tools.gateway import ToolGateway
from agent.tools.registry import find_tools
from bots.app import build_app
from tests.helpers import REPO, interaction, say

# The whole tool: its parameters, its handler and its declaration, in the project's own folder.
TOOL_MODULE = """
from pydantic import Field

from agent.tools import SideEffect, ToolContext, ToolOutput, ToolParams, tool

EARNED = {"C-001": 1240, "C-002": 80}


class RedeemParams(ToolParams):
    points: int = Field(gt=0, description="How many loyalty points to turn into a voucher")


@tool(
    "Turn loyalty points into a store voucher. Needs the customer's yes.",
    side_effect=True,
    needs_approval=True,
    records=("voucher",),
)
async def redeem_points(p: RedeemParams, ctx: ToolContext) -> ToolOutput:
    spent = sum(v.data["points"] for v in await ctx.records.find("voucher"))
    have = EARNED.get(ctx.customer_id or "", 0) - spent
    if p.points > have:
        return ToolOutput(data={"status": "short", "have": have})
    # The confirmed action's hash: a re-run of this action writes the same voucher, once.
    voucher = "V-" + (ctx.action_hash or ctx.interaction_id)[:6].upper()
    return ToolOutput(
        data={"status": "redeemed", "voucher": voucher, "left": have - p.points},
        effects=[SideEffect(kind="voucher", key=voucher, data={"points": p.points})],
    )
"""

AGENTS = """
  loyalty:
    planner: template
    description: The store's loyalty programme.
    tools: [redeem_points]
tool_modules: [tools/loyalty.py]
"""

INTENT = """
  - id: redeem_points
    agent: loyalty
    description: Turn loyalty points into a voucher.
    goal_name: ["redeeming {points} points", "redeeming your points"]
    required_params: [points]
    tool: redeem_points
    priority: 20
    templates:
      fields: [have, left, voucher]
      ask: {points: "How many points would you like to redeem?"}
      confirm: "Redeem {points} points for a voucher?"
      answer:
        redeemed: "Done: voucher {voucher} is yours, and you have {left} points left."
        short: "You only have {have} points, so I can't redeem that many."
"""

SLOT = """
  points:
    label: points
    pattern: '(\\d{2,6})\\s*(?:loyalty\\s+|reward\\s+)?points'
    reply_pattern: '(\\d{2,6})'
"""

EXAMPLES = """
  redeem_points:
  - redeem my loyalty points
  - turn my points into a voucher
  - I want to use my reward points
  - cash in my points for a coupon
  - convert loyalty points to store credit
  - spend my rewards points
  - exchange points for a gift voucher
  - use my bonus points
"""


def insert_after(path: Path, marker: str, lines: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(marker) == 1, f"{path.name} no longer has {marker!r}"
    path.write_text(text.replace(marker, marker + lines, 1), encoding="utf-8")


def add_config(config: Path) -> None:
    """The recipe's config lines: the agent granted the tool, the module named, the intent, its slot and examples."""
    agent, modules = AGENTS.split("tool_modules")
    insert_after(config / "agents.yaml", "\nagents:\n", agent.lstrip("\n"))
    with (config / "agents.yaml").open("a", encoding="utf-8") as f:
        f.write("tool_modules" + modules)
    insert_after(config / "intents.yaml", "\nintents:\n", INTENT.lstrip("\n") + "\n")
    insert_after(config / "intents.yaml", "\nslots:\n", SLOT.lstrip("\n"))
    insert_after(config / "nlu.yaml", "\nintents:\n", EXAMPLES.lstrip("\n"))


def write_project(folder: Path) -> Path:
    """The project: a copy of the shipped config with the recipe's lines, and its tool module."""
    config = folder / "config"
    shutil.copytree(REPO / "config", config)
    (folder / "tools").mkdir()
    (folder / "tools" / "loyalty.py").write_text(TOOL_MODULE, encoding="utf-8")
    add_config(config)
    return config


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    async with build_app(write_project(tmp_path), REPO / "data", f"sqlite+aiosqlite:///{tmp_path / 'a.db'}") as a:
        yield a


DONE = re.compile(r"Done: voucher (V-[0-9A-F]{6}) is yours, and you have (\d+) points left\.")


async def test_a_projects_own_tool_answers_after_the_customers_yes(app: App) -> None:
    response, _ = await say(app.router, "could I swap some of my reward points for a voucher please")
    assert response.intent_id == "redeem_points"
    assert response.text == "How many points would you like to redeem?"
    response, _ = await say(app.router, "500 points")
    # The module declared it needs a yes: nothing runs before it.
    assert response.text == "Redeem 500 points for a voucher? Please confirm or cancel."
    assert response.tool_results == []
    response, _ = await say(app.router, "yes")
    done = DONE.fullmatch(response.text)
    assert done is not None and done.group(2) == "740", response.text


async def test_a_new_kind_of_record_is_kept_and_read_back_in_a_later_conversation(
    tmp_path: Path, any_db_url: str
) -> None:
    """`voucher` has no table and no migration: the tool's declaration is enough to keep it."""
    async with build_app(write_project(tmp_path), REPO / "data", any_db_url) as app:
        await say(app.router, "please trade 500 reward points for a voucher", session="monday")
        first, _ = await say(app.router, "yes", session="monday")
        # A second click on the same confirmation replays the first result: one voucher, not two.
        click = interaction("Confirm", session="monday").model_copy(update={"action": "confirm"})
        again = await app.router.handle(click)
        # Days later, another conversation: the tool reads its voucher back, so those points are spent.
        await say(app.router, "I want to spend 700 reward points on a voucher", session="friday")
        later, _ = await say(app.router, "yes", session="friday")
        await say(app.router, "I'd like to cash in 800 loyalty points", session="sunday")
        short, _ = await say(app.router, "yes", session="sunday")
        # Another customer's vouchers are theirs alone: C-002 still has all 80 points.
        await say(app.router, "please trade 50 reward points for a voucher", session="other", customer="C-002")
        other, _ = await say(app.router, "yes", session="other", customer="C-002")
        rows = await app.store.fetch("SELECT kind, key, owner, session_id, data FROM records ORDER BY id")  # type: ignore[attr-defined]

    firsts = [DONE.fullmatch(r.text) for r in (first, later, other)]
    assert all(firsts), [first.text, later.text, other.text]
    assert [m.group(2) for m in firsts if m] == ["740", "40", "30"]
    assert again.tool_results[0].replayed and again.text == first.text
    assert short.text == "You only have 40 points, so I can't redeem that many."
    assert [(r.kind, r.key, r.owner, json.loads(r.data)) for r in rows] == [
        ("voucher", m.group(1), owner, {"points": points})
        for m, owner, points in zip(firsts, ("C-001", "C-001", "C-002"), (500, 700, 50), strict=True)
        if m
    ]
    assert len({r.session_id for r in rows}) == 3


async def test_the_projects_tool_reports_what_it_cannot_do(app: App) -> None:
    await say(app.router, "I'd like to cash in 5000 loyalty points", customer="C-002")
    response, _ = await say(app.router, "yes", customer="C-002")
    assert response.text == "You only have 80 points, so I can't redeem that many."


async def test_a_tool_module_that_is_not_there_is_named_at_startup(tmp_path: Path) -> None:
    config = tmp_path / "config"
    shutil.copytree(REPO / "config", config)
    add_config(config)  # names tools/loyalty.py, which was never written
    with pytest.raises(ConfigError, match="no such tool module"):
        async with build_app(config, REPO / "data", f"sqlite+aiosqlite:///{tmp_path / 'a.db'}"):
            pass


def test_an_installed_package_adds_tools_through_its_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package on the path that names a module in the `agentbot.tools` entry point group."""
    (tmp_path / "loyalty_plugin.py").write_text(TOOL_MODULE, encoding="utf-8")
    info = tmp_path / "loyalty_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: loyalty-plugin\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[agentbot.tools]\nloyalty = loyalty_plugin\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = {t.name: t for t in find_tools(ToolDeps())}
    assert found["redeem_points"].needs_approval and found["redeem_points"].side_effect
    assert "math_evaluate" in found  # agentbot's own, found beside it
    assert "check_order_status" not in found  # no order data given: no order tools


async def test_a_tool_that_writes_what_it_did_not_declare_fails_safely(db_url: str) -> None:
    @tool("Writes a ticket it never declared.", side_effect=True)
    async def sneaky(p: ToolParams, ctx: ToolContext) -> ToolOutput:
        row = {"id": "T-1", "session_id": ctx.session_id}
        return ToolOutput(effects=[SideEffect(kind="ticket", key="T-1", data=row)])

    store = SqlStore(db_url)
    try:
        gateway = ToolGateway([sneaky], {"support": ["sneaky"]}, store)
        ctx = ToolContext(session_id="s", interaction_id="i", agent="support")
        result = await gateway.execute(ToolCall(tool_name="sneaky", params={}), ctx)
    finally:
        await store.aclose()
    assert not result.success and result.error_code == "undeclared_record" and result.effects == []


async def test_a_tool_reads_only_the_records_it_declares(db_url: str) -> None:
    @tool("Peeks at vouchers it never declared.")
    async def peek(p: ToolParams, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(data={"found": len(await ctx.records.find("voucher"))})

    @tool("Counts the stamps it keeps.", records=("stamp",))
    async def stamps(p: ToolParams, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(data={"found": len(await ctx.records.find("stamp"))})

    store = SqlStore(db_url)
    try:
        ctx = ToolContext(session_id="s", interaction_id="i", agent="support", customer_id="C-001")
        kept = ToolGateway([peek, stamps], {"support": ["peek", "stamps"]}, store, records=SqlRecords(store))
        peeked = await kept.execute(ToolCall(tool_name="peek", params={}), ctx)
        counted = await kept.execute(ToolCall(tool_name="stamps", params={}), ctx)
        # A storage of one's own that keeps no records says so to the tool that reads them.
        none_kept = ToolGateway([stamps], {"support": ["stamps"]}, store)
        nowhere = await none_kept.execute(ToolCall(tool_name="stamps", params={}), ctx)
    finally:
        await store.aclose()
    assert not peeked.success and peeked.error_code == "undeclared_record" and "voucher" in (peeked.error or "")
    assert counted.success and counted.data == {"found": 0}
    assert not nowhere.success and nowhere.error_code == "no_records"


def test_a_record_kind_is_a_plain_word() -> None:
    with pytest.raises(ValueError, match="record kinds are"):

        @tool("Keeps records of a kind no table could be named after.", records=("Loyalty Vouchers",))
        async def odd(p: ToolParams, ctx: ToolContext) -> ToolOutput:
            return ToolOutput()
