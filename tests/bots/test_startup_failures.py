"""A command that cannot start says why in one line and exits with the code for that kind of failure."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

from bots.cli.failures import Exit, explain
from tests.bots.test_cli import agentbot
from tests.bots.test_slack_cli import PROXY
from tests.helpers import REPO
from tests.slack_harness import SECRET
from tests.standins.slack_standin import SlackStandIn


def one_line(stderr: str) -> str:
    """The one line that says why; a server's INFO records of a healthy start (its CPU) may come before it."""
    lines = [line for line in stderr.splitlines() if line.strip() and not re.match(r"^\d{4}-\d\d-\d\d .* INFO ", line)]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("not a url", "database: the URL is not valid"),
        ("mysql://u@db.example/shop", "database: no driver for mysql"),
        ("postgresql+asyncpg://agentbot@127.0.0.1:1/agentbot", "database: cannot "),
    ],
)
def test_a_bad_or_unreachable_database_is_one_line_and_exit_4(url: str, said: str) -> None:
    out = agentbot("chat", "-m", "hi", "--db-url", url)
    assert out.returncode == Exit.DATABASE and out.stdout == ""
    assert one_line(out.stderr).startswith(f"agentbot: {said}")


def test_a_corrupt_sqlite_file_is_one_line_and_keeps_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "agentbot.db"
    broken.write_bytes(b"this is not a database, it is a shopping list " * 100)
    out = agentbot("chat", "-m", "hi", "--db-url", f"sqlite+aiosqlite:///{broken}")
    assert out.returncode == Exit.DATABASE
    line = one_line(out.stderr)
    assert line.startswith(f"agentbot: database: the SQLite database {broken} is damaged (") and ".recover" in line
    assert broken.read_bytes().startswith(b"this is not a database")  # nothing was overwritten


async def run_slack(env_extra: dict[str, str], db_url: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k not in PROXY and not k.startswith(("AGENTBOT_", "SLACK_"))}
    env |= {"SLACK_BOT_TOKEN": "xoxb-rejected", "SLACK_SIGNING_SECRET": SECRET, **env_extra}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bots.cli", "slack", "--port", "0", "--db-url", db_url,
        cwd=REPO, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, stderr = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, stderr.decode()


async def test_a_rejected_slack_token_is_one_line_and_exit_5(db_url: str, slack: SlackStandIn) -> None:
    slack.fail_next("auth.test", 200, {"ok": False, "error": "invalid_auth"})
    code, stderr = await run_slack({"SLACK_API_URL": f"{slack.url}/api/"}, db_url)
    assert code == Exit.PLATFORM
    assert one_line(stderr) == (
        "agentbot: Slack rejected SLACK_BOT_TOKEN (invalid_auth): reinstall the app and copy the Bot User OAuth "
        "Token again"
    )
    assert "xoxb-rejected" not in stderr


async def test_an_unreachable_slack_is_one_line_and_exit_5(db_url: str) -> None:
    code, stderr = await run_slack({"SLACK_API_URL": "http://127.0.0.1:1/api/"}, db_url)
    assert code == Exit.PLATFORM
    assert one_line(stderr).startswith("agentbot: cannot reach Slack:")


def test_missing_extras_name_the_install_command() -> None:
    failure = explain(ModuleNotFoundError("No module named 'slack_bolt'", name="slack_bolt"))
    assert failure is not None and failure.code == Exit.MISSING_EXTRA
    assert failure.message == "slack_bolt is not installed: pip install 'agentbot[slack]'"
    postgres = explain(ModuleNotFoundError("No module named 'asyncpg'", name="asyncpg"))
    assert postgres is not None and "agentbot[postgres]" in postgres.message
    assert explain(ModuleNotFoundError("No module named 'agentx'", name="agentx")) is None  # a bug keeps its traceback
    assert explain(ZeroDivisionError()) is None
