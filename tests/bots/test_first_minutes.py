"""The first five minutes of a newcomer: the README's suggestions in a real console, the demo data that fits
its store and comes back with a reset, `.env`, and nothing silent."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from pathlib import Path

import pexpect
import pytest

from agent.domain.types import utcnow
from bots.app import build_app, check_store
from bots.console.commands import HANDED_OFF
from tests.bots.test_cli import agentbot
from tests.bots.test_console import spawn
from tests.helpers import REPO, say

LOG_RECORD = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (DEBUG|INFO|WARNING|ERROR) ")

# What each of the README's suggestions answers, in the README's order (its Quickstart table).
ANSWERS: dict[str, list[str]] = {
    "Where's my order O-12345?": ["has shipped via UPS", "1Z5R89E70392648153", "Logitech MX Master 3S"],
    "refund O-23456": ["Refund ฿3,290 for order O-23456?"],
    "yes": ["I've refunded ฿3,290 for order O-23456"],
    "recommend a gaming mouse under 1500": ["3 in-stock options for a gaming mouse within ฿1,500"],
    "my laptop keeps freezing": ["Which device is it?"],
    "Lenovo Legion 5": [
        'Here\'s what to try for "keeps freezing" on your Lenovo Legion 5',
        "Source: Laptop freezes or stops responding",
    ],
    "what's your returns policy?": ["deducted from the refund.", "Source: Returns and refunds policy (Return policy"],
    "add a task to call the bank": ["Added to your list as task 1: call the bank."],
    "how risky is release 2.4.1": [
        "HIGH risk",
        "I filed risk report R-",
        "(admins alerted: High-risk release report",
    ],
    "how risky is release 2.3": ["Did you mean 2.3.9?"],
    "talk to a human": ["(admins alerted: Human handoff requested", "A person has this conversation now"],
    "/resume": ["I'm back in this conversation"],
}


def readme_suggestions() -> list[str]:
    """The Quickstart table's first column: `a`, then `b` in each row, in order."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| you type | the bot answers |") :].split("\n\n", 1)[0]
    rows = [line.split(" | ")[0] for line in table.splitlines()[2:]]
    return [typed for row in rows for typed in re.findall(r"`([^`]+)`", row)]


def test_the_readme_suggestions_answer_in_order_with_no_log_record_between(tmp_path: Path) -> None:
    assert readme_suggestions() == list(ANSWERS)  # this test and the README say the same
    child = spawn(tmp_path)
    child.expect_exact("You are Alice Moreno (customer C-001)")
    child.expect_exact("you> ")
    transcript = child.before
    for typed, answers in ANSWERS.items():
        child.sendline(typed)
        child.expect_exact("you> ")
        said = child.before
        transcript += said
        missing = [a for a in answers if a not in said]
        assert not missing, f"{typed!r} answered {said!r}"
    child.sendline("how risky is release 2.4.1")  # the same release again: the same report, no alert
    child.expect_exact("you> ")
    again = child.before
    child.sendline("/quit")
    child.expect(pexpect.EOF, timeout=30)
    first_report = re.search(r"I filed risk report (R-[0-9A-F]{8})", transcript)
    assert first_report and f"This is risk report {first_report.group(1)}, filed earlier today" in again
    assert "admins alerted" not in again
    assert not LOG_RECORD.search(transcript + again), transcript + again


async def test_demo_reset_restores_a_refunded_order(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        await say(app.router, "refund O-23456", session="r")
        await say(app.router, "yes", session="r")
        refunded, _ = await say(app.router, "where is O-23456", session="r")
        assert "was refunded" in refunded.text
    out = agentbot("demo", "reset", "--db-url", db_url)
    assert out.returncode == 0, out.stderr
    assert "demo data reset: 2 changes undone" in out.stdout  # the refund and its order update
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        delivered, _ = await say(app.router, "where is O-23456", session="after")
        again, _ = await say(app.router, "refund O-23456", session="after")
    assert "was delivered by FedEx" in delivered.text and "Refund ฿3,290 for order O-23456?" in again.text


@pytest.mark.parametrize("store", ["", "stores/outdoor"])
async def test_demo_dates_are_never_in_the_past_on_a_first_run(db_url: str, store: str) -> None:
    today = utcnow().date()
    data_dir = REPO / "data" / store
    ids = json.loads((data_dir / "orders.json").read_text())
    async with build_app(REPO / "config" / store, data_dir, db_url) as app:
        await check_store(app)
        orders = [await app.data.get_order(order_id) for order_id in ids]
    for order in orders:
        assert order is not None
        dates = {k: v for k, v in order.items() if k.endswith(("_at", "eta"))}
        assert all(date.fromisoformat(str(v)[:10]) for v in dates.values()), order  # every offset resolved
        if order["status"] in ("shipped", "in_transit", "delayed", "processing"):
            assert date.fromisoformat(order["eta"]) > today, order
    shipped = next(o for o in orders if o and o["status"] == "shipped")
    assert shipped["shipped_at"] == (today - timedelta(days=1)).isoformat()  # shipped yesterday...
    assert date.fromisoformat(shipped["eta"]) - today >= timedelta(days=5)  # ...arriving next week


def test_the_computer_shops_orders_are_its_own_products_at_its_prices() -> None:
    import csv

    rows = csv.DictReader((REPO / "data" / "inventory.csv").read_text(encoding="utf-8").splitlines())
    inventory = {row["name"]: float(row["price"]) for row in rows}
    orders = json.loads((REPO / "data" / "orders.json").read_text())
    for order in orders.values():
        assert all(item in inventory for item in order["items"]), order
        assert order["amount"] == sum(inventory[item] for item in order["items"]), order


def test_dot_env_is_read_and_info_names_it(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("# my settings\nAGENTBOT_UNDERSTANDING=llm\n", encoding="utf-8")
    out = agentbot("info", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "understanding: llm" in out.stdout
    assert f"environment file: {tmp_path / '.env'}" in out.stdout
    (tmp_path / "elsewhere").mkdir()
    bare = agentbot("info", cwd=tmp_path / "elsewhere")
    assert "environment file: none" in bare.stdout and "understanding: rules" in bare.stdout


def test_the_shipped_env_example_copied_to_dot_env_keeps_the_console_free_of_log_records(tmp_path: Path) -> None:
    """`agentbot init` says to copy .env.example to .env; every command then reads it."""
    (tmp_path / ".env").write_text((REPO / ".env.example").read_text(encoding="utf-8"), encoding="utf-8")
    out = agentbot("chat", "-m", "talk to a human", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "human support agent" in out.stdout
    records = [line for line in (out.stdout + out.stderr).splitlines() if re.search(r"\b(INFO|WARNING)\b", line)]
    assert records == []


async def test_one_shot_into_a_conversation_a_person_has_says_so(db_url: str) -> None:
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        await say(app.router, "talk to a human", session="taken")
        await app.router.control("taken", "claim", "an admin")
    out = agentbot("chat", "--db-url", db_url, "--session", "taken", "-m", "hello? where is O-12345")
    assert out.returncode == 0, out.stderr
    assert HANDED_OFF in out.stdout and "shipped" not in out.stdout


def test_an_unknown_session_says_so_and_stays_put(db_url: str) -> None:
    out = agentbot("chat", "--db-url", db_url, stdin="where is O-12345\n/session nobody-here\n/sessions\n")
    assert "(there is no conversation nobody-here; /sessions lists them" in out.stdout
    assert "switched" not in out.stdout and "* console:" in out.stdout


def test_agentbot_alone_prints_the_help() -> None:
    out = agentbot()
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout.startswith("usage: agentbot") and "demo" in out.stdout and "chat" in out.stdout
