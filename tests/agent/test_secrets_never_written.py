"""A provider that echoes the API key in its error body: the key reaches no file the bot writes.

Runs the real openai and anthropic SDKs against the stand-in LLM on loopback, with tracing on
(trace files) and a SQLite file (telemetry rows, messages, stored provider errors), then reads
every byte the bot wrote under the test's folder.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bots.app import build_app
from bots.logs import redacting_filter
from bots.secrets import known_secrets, scrubber
from tests.helpers import REPO, say
from tests.standins.llm_server import Reply, StandInLLM

KEY = "sk-proj-Zx9Qw7Er5Ty3Ui1Op0AsDf2Gh4Jk6Lz8Mn"
ANTHROPIC_KEY = "sk-ant-api03-Qw7Er5Ty3Ui1Op0AsDf2Gh4Jk6Lz8MnBv"
# Shaped like nothing the patterns know (no prefix, short, no mixed-case run): only its value gives it away.
ODD_KEY = "tea.kettle!42+moss"


def written(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize(("provider", "key"), [("openai", KEY), ("anthropic", ANTHROPIC_KEY), ("compat", ODD_KEY)])
async def test_an_echoed_key_is_in_no_written_file(
    tmp_path: Path, llm_server: StandInLLM, provider: str, key: str
) -> None:
    echo = f"Incorrect API key provided: {key}. You can find your API key at https://example.invalid/keys."
    # Every call is refused, however many the turn makes (a message may be split into requests).
    llm_server.queue += [Reply(status=401, text=echo) for _ in range(8)]
    env = {
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": llm_server.openai_url,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": llm_server.anthropic_url,
        "AGENTBOT_COMPAT_API_KEY": ODD_KEY,
        "AGENTBOT_COMPAT_BASE_URL": llm_server.openai_url,
        "AGENTBOT_TRACES_DIR": str(tmp_path / "traces"),
    }
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    async with build_app(REPO / "config", REPO / "data", db_url, "llm", env=env, provider=provider) as app:
        r, _ = await say(app.router, "Where's O-12345? mail me at alice@example.com or +1 (555) 123-4567")
        stored = await app.store.fetch("SELECT payload FROM telemetry_events")  # type: ignore[attr-defined]
    # The refused model is not the answer: the rules answer (issue 16), with nothing of the key in it.
    assert "O-12345" in r.text and key not in r.text
    files = written(tmp_path)
    assert any("traces" in name for name in files) and any(name.endswith("bot.db") for name in files)
    for name, data in files.items():
        assert key.encode() not in data, name  # never the key, in any file
    payloads = " ".join(row.payload for row in stored)
    assert "auth" in payloads  # the provider error is recorded, masked
    assert "alice@example.com" not in payloads and "555) 123-4567" not in payloads


def test_log_lines_and_tracebacks_are_masked() -> None:
    record = logging.LogRecord("agentbot", logging.ERROR, __file__, 1, "provider said %s", (f"bad key {KEY}",), None)
    try:
        raise RuntimeError(f"echo {KEY} for bob@example.com")
    except RuntimeError:
        import sys

        record.exc_info = sys.exc_info()
    redacting_filter({"OPENAI_API_KEY": "plain-looking-secret-value"}).filter(record)
    line = logging.Formatter().format(record)
    assert KEY not in line and "bob@example.com" not in line and "[secret]" in line


def test_known_secrets_are_the_secret_variables_and_database_passwords() -> None:
    env = {
        "AGENTBOT_COMPAT_API_KEY": ODD_KEY,
        "SLACK_SIGNING_SECRET": "s1gning",
        "AGENTBOT_DB_URL": "postgresql+asyncpg://bot:pa%24%24word9@db:5432/agentbot",
        "HOME": "/home/bot",
        "AGENTBOT_TOKEN_BUDGET_NOTE": "not-a-secret-value",
    }
    found = known_secrets(env, ["postgresql://other:hunter22@db/x"])
    assert {ODD_KEY, "s1gning", "pa$$word9", "hunter22"} <= set(found)
    assert "/home/bot" not in found and "not-a-secret-value" not in found
    text = f"connect postgresql+asyncpg://bot:pa%24%24word9@db:5432/agentbot failed; key {ODD_KEY}; pw hunter22"
    scrubbed = scrubber(env, urls=["postgresql://other:hunter22@db/x"]).text(text)
    assert ODD_KEY not in scrubbed and "pa%24%24word9" not in scrubbed and "hunter22" not in scrubbed
