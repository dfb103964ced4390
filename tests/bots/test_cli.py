"""The `agentbot` command as a user runs it: real processes, a real SQLite file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO, demo_day


def agentbot(*args: str, stdin: str = "", cwd: Path = REPO, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTBOT_")}
    return subprocess.run(
        [sys.executable, "-m", "bots.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


def test_piped_repl_answers_and_exits_on_eof(db_url: str) -> None:
    out = agentbot(
        "chat", "--db-url", db_url, "--session", "pipe", "--customer", "C-001", stdin="Where's my order O-12345?\n"
    )
    assert out.returncode == 0, out.stderr
    assert "shipped" in out.stdout and "UPS" in out.stdout and demo_day(6) in out.stdout
    assert out.stdout.index("Checking order O-12345") < out.stdout.index("has shipped")


def test_one_shot_json_prints_the_response_and_every_delivered_message(db_url: str) -> None:
    out = agentbot("chat", "--db-url", db_url, "-m", "track o-23456", "--customer", "C-001", "--json")
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert payload["response"]["intent_id"] == "order_status"
    assert [m["kind"] for m in payload["delivered"]] == ["pre", "answer"]
    assert "delivered" in payload["response"]["text"]


def test_a_goal_continues_in_a_second_process(db_url: str) -> None:
    first = agentbot(
        "chat", "--db-url", db_url, "--session", "two-procs", "--customer", "C-001", "-m", "I want to check my order"
    )
    assert "order ID" in first.stdout
    second = agentbot("chat", "--db-url", db_url, "--session", "two-procs", "--customer", "C-001", "-m", "12345")
    assert "shipped" in second.stdout


def test_runs_from_another_folder_on_the_shipped_config(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'x.db'}"
    out = agentbot("chat", "--db-url", url, "--customer", "C-001", "-m", "O-12345", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "shipped" in out.stdout


def test_eval_reports_and_exits_1_on_a_failing_scenario(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: demo\nscenarios:\n"
        "  - id: good\n    customer: C-001\n    turns:\n"
        "      - user: O-12345\n        expect: {tools: [check_order_status]}\n"
        "  - id: bad\n    customer: C-001\n    turns:\n"
        "      - user: O-12345\n        expect: {reply_contains: [delivered]}\n"
    )
    out = agentbot("eval", str(suite), "--json")
    assert out.returncode == 1
    report = json.loads(out.stdout)
    assert report["summary"] == {"scenarios": 2, "passed": 1, "failed": 1, "pass_rate": 0.5, "turns": 2}
    bad = next(s for s in report["scenarios"] if s["id"] == "bad")
    assert bad["status"] == "fail" and bad["failures"][0]["key"] == "reply_contains"


def test_eval_rejects_unknown_expectation_keys(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text("name: demo\nscenarios:\n  - id: x\n    turns:\n      - user: hi\n        expect: {mood: happy}\n")
    out = agentbot("eval", str(suite))
    assert out.returncode == 2
    assert "s.yaml, line 6" in out.stderr and "mood" in out.stderr


def test_shipped_suites_pass_through_the_cli() -> None:
    suites = sorted(str(p) for p in (REPO / "tests" / "suites").glob("*.yaml"))
    out = agentbot("eval", *suites)
    assert out.returncode == 0, out.stdout
    assert "0 failed" in out.stdout


def test_corrupt_config_stops_startup_naming_the_problem(tmp_path: Path) -> None:
    (tmp_path / "intents.yaml").write_text("intents: [\n")
    (tmp_path / "agents.yaml").write_text("agents: {}\n")
    out = agentbot("chat", "--config-dir", str(tmp_path), "-m", "hi")
    assert out.returncode == 2
    assert "configuration error" in out.stderr and "intents.yaml, line" in out.stderr


def test_a_second_store_is_only_flags(db_url: str) -> None:
    out = agentbot(
        "chat",
        "--config-dir",
        "config/stores/outdoor",
        "--data-dir",
        "data/stores/outdoor",
        "--db-url",
        db_url,
        "-m",
        "recommend a headlamp under $60",
    )
    assert out.returncode == 0, out.stderr
    assert "Black Diamond Spot 400 (HL-50): $49.95" in out.stdout and "Petzl" not in out.stdout


def test_eval_uses_the_store_a_suite_names(tmp_path: Path) -> None:
    out = agentbot("eval", "tests/suites/outdoor_store.yaml", "tests/suites/sales_support.yaml", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    summary = json.loads(out.stdout)["summary"]
    assert summary["failed"] == 0 and summary["scenarios"] >= 14
