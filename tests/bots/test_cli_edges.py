"""The CLI's edges: a command that only reads never makes a database, `init` copies nothing a running
project wrote, a closed pipe ends quietly, every flag has help, and an overlong message leaves a trace."""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent.app import App
from bots.cli.main import main, parser
from bots.project import init_project
from tests.helpers import REPO, say


def test_a_read_only_command_on_a_missing_database_makes_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nowhere = tmp_path / "not" / "there"
    url = f"sqlite+aiosqlite:///{nowhere / 'bot.db'}"
    for command in (["sessions"], ["trace", "console:ana"], ["review"], ["review", "--json"]):
        assert main([*command, "--db-url", url]) == 4, command
        err = capsys.readouterr().err
        assert f"no database at {nowhere / 'bot.db'}" in err and "only reads" in err, (command, err)
    assert not nowhere.parent.exists()  # no folder, no file


def test_init_copies_no_runtime_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "checkout"
    shutil.copytree(REPO / "config", source / "config", ignore=shutil.ignore_patterns("stores"))
    shutil.copytree(REPO / "data", source / "data", ignore=shutil.ignore_patterns("clinc150"))
    config = source / "config"
    (config / ".reload").touch()
    (config / ".reloaded.json").write_text("{}", encoding="utf-8")
    (config / "banks" / "reviewed.yaml").write_text('intents:\n  create_ticket:\n  - "a label"\n', encoding="utf-8")
    nlu = config / "nlu.yaml"
    nlu.write_text(
        nlu.read_text(encoding="utf-8").replace(
            "banks/store_items.yaml]", "banks/store_items.yaml, banks/reviewed.yaml]"
        )
    )
    monkeypatch.setattr("bots.project.packaged_defaults", lambda: source)
    init_project(tmp_path / "mybot")
    made = tmp_path / "mybot" / "config"
    assert not (made / ".reload").exists() and not (made / ".reloaded.json").exists()
    assert not (made / "banks" / "reviewed.yaml").exists()
    assert "reviewed.yaml" not in (made / "nlu.yaml").read_text(encoding="utf-8")
    assert "banks/store_items.yaml" in (made / "nlu.yaml").read_text(encoding="utf-8")


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "bots.cli", "info", "--db-url", f"sqlite+aiosqlite:///{tmp_path / 'x.db'}"]
    with subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as run:
        assert run.stdout is not None and run.stderr is not None
        run.stdout.close()  # the reader is gone before the command writes a line (`| head -0`)
        err = run.stderr.read().decode()
        run.wait(timeout=120)
    assert run.returncode == 0, err
    assert "BrokenPipe" not in err and "cannot reach" not in err and "Traceback" not in err, err


def test_every_subcommand_and_flag_has_help() -> None:
    import argparse

    missing = []

    def walk(p: argparse.ArgumentParser, name: str) -> None:
        for action in p._actions:  # noqa: SLF001 - argparse keeps its actions nowhere public
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                helped = {c.dest for c in action._choices_actions}  # noqa: SLF001
                for sub, child in action.choices.items():
                    if sub not in helped:
                        missing.append(f"{name} {sub}")
                    walk(child, f"{name} {sub}")
            elif not isinstance(action, argparse._HelpAction | argparse._VersionAction) and not action.help:  # noqa: SLF001
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")

    walk(parser(), "agentbot")
    assert missing == []
    chat = parser()._subparsers._group_actions[0].choices["chat"]  # noqa: SLF001
    assert "console:<your user name>:<customer>" in " ".join(chat.format_help().split())


async def test_an_overlong_message_is_logged_masked_and_counted(app: App, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="agentbot.router")
    limit = app.settings.max_message_chars
    text = "write to dana.r@example.org " + "x" * limit
    r, _ = await say(app.router, text, session="long-1")
    assert "too long" in r.text
    [line] = [rec.getMessage() for rec in caplog.records if "refused" in rec.getMessage()]
    assert f"a message of {len(text)} characters (the limit is {limit})" in line
    assert "dana.r@example.org" not in line and "[email]" in line
    assert app.metrics is not None
    body, _ = await app.metrics.exposition()  # type: ignore[attr-defined]
    assert 'outcome="too_long"} 1.0' in body.decode()
