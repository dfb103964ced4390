"""`agentbot eval` baselines, report and progress; `agentbot sessions` and `agentbot trace`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from adapters.telemetry.files import read_trace
from tests.bots.test_cli import agentbot
from tests.helpers import REPO

RELEASE_SUITE = str(REPO / "tests" / "suites" / "release.yaml")
ORDERS_SUITE = str(REPO / "tests" / "suites" / "orders.yaml")


def test_a_degraded_config_regresses_against_the_saved_baseline(tmp_path: Path) -> None:
    baselines = str(tmp_path / "baselines")
    saved = agentbot("eval", RELEASE_SUITE, ORDERS_SUITE, "--save-baseline", "good", "--baselines-dir", baselines)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    assert (tmp_path / "baselines" / "good.json").exists()

    # Deliberately degraded: two plan passes are too few for the release agent (fetch, file, answer).
    degraded = tmp_path / "degraded"
    shutil.copytree(REPO / "config", degraded)
    with (degraded / "settings.yaml").open("a") as f:
        f.write("max_agent_passes: 2\n")
    out = agentbot(
        "eval",
        RELEASE_SUITE,
        ORDERS_SUITE,
        "--config-dir",
        str(degraded),
        "--baseline",
        "good",
        "--baselines-dir",
        baselines,
        "--json",
    )
    assert out.returncode == 3, out.stderr
    assert "WARNING: regression vs baseline 'good': overall pass_rate" in out.stderr
    analysis = json.loads(out.stdout)["regression_analysis"]
    regressed = {(r["scope"], r["metric"]) for r in analysis["regressions"]}
    assert {
        ("overall", "pass_rate"),
        ("release", "task_completion"),
        ("release/high_risk_files_report_and_alerts", "passed"),
    } <= regressed
    assert ("orders", "pass_rate") not in regressed  # the order suite did not get worse

    same = agentbot("eval", RELEASE_SUITE, ORDERS_SUITE, "--baseline", "good", "--baselines-dir", baselines)
    assert same.returncode == 0, same.stderr
    assert "regression" not in same.stderr


def test_unknown_baseline_fails_before_running(tmp_path: Path) -> None:
    out = agentbot("eval", RELEASE_SUITE, "--baseline", "nope", "--baselines-dir", str(tmp_path))
    assert out.returncode == 2
    assert "no baseline named 'nope'" in out.stderr


def test_report_progress_and_json_keep_the_old_keys(tmp_path: Path) -> None:
    report = tmp_path / "out" / "report.json"
    out = agentbot("eval", RELEASE_SUITE, "--json", "--report", str(report), "--progress")
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert payload["summary"] == {"scenarios": 10, "passed": 10, "failed": 0, "pass_rate": 1.0, "turns": 15}
    first = payload["scenarios"][0]
    assert first["status"] == "pass" and first["failures"] == []
    assert first["metrics"]["tool_usage"] == 1.0 and first["metrics"]["llm_calls"] == 0
    assert payload["metrics"]["suites"]["release"]["fallback_rate"] == 0.0
    assert "[##############################] 10/10" in out.stderr

    spec = json.loads(report.read_text())
    assert spec["summary"]["pass_rate"] == 1.0 and spec["summary"]["total_scenarios"] == 10
    assert spec["summary"]["avg_scores"]["tool_usage"] == 1.0
    assert {s["status"] for s in spec["scenarios"]} == {"passed"}
    assert spec["regression_analysis"] == {"baseline": None, "regressions": [], "improvements": [], "changes": []}


def test_text_output_shows_the_metrics_table() -> None:
    out = agentbot("eval", RELEASE_SUITE)
    assert out.returncode == 0
    assert "10 scenarios, 10 passed" in out.stdout
    assert "goal_completion" in out.stdout and "tool_usage" in out.stdout
    assert "[###" not in out.stderr  # no TTY, no flag: no progress bar


def test_sessions_and_trace_read_the_conversation_back(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    agentbot("chat", "--db-url", db, "--session", "ops", "-m", "how risky is release 2.4.1")
    agentbot("chat", "--db-url", db, "--session", "ops", "-m", "and 2.3.9?")
    agentbot("chat", "--db-url", db, "--session", "other", "--customer", "C-001", "-m", "O-12345")

    listed = json.loads(agentbot("sessions", "--db-url", db, "--json").stdout)
    assert [s["session"] for s in listed] == ["other", "ops"]
    assert listed[1]["turns"] == 2 and listed[1]["last_message"] == "and 2.3.9?"

    table = agentbot("trace", "ops", "--db-url", db)
    assert table.returncode == 0, table.stderr
    assert "2 turn(s)" in table.stdout and "intent=release_risk" in table.stdout
    assert "get_release_summary ok" in table.stdout and "file_risk_report ok" in table.stdout
    assert "tool_execute" in table.stdout and "HIGH risk" in table.stdout

    exported = json.loads(agentbot("trace", "ops", "--db-url", db, "--json").stdout)
    first = exported["turns"][0]
    assert first["user"] == "how risky is release 2.4.1" and first["plan"] == "tool_call"
    assert [t["tool"] for t in first["tools"]] == ["get_release_summary", "file_risk_report"]
    trace_file = tmp_path / "traces" / f"{first['trace_id']}.jsonl"
    span_ids = {s["span_id"] for s in read_trace(trace_file)}
    assert {s["span_id"] for s in first["stages"]} <= span_ids

    missing = agentbot("trace", "nobody", "--db-url", db)
    assert missing.returncode == 1 and "no turns recorded" in missing.stderr


def test_judge_without_a_provider_says_so() -> None:
    out = agentbot("eval", RELEASE_SUITE, "--judge")
    assert out.returncode == 2
    assert "--judge needs an LLM provider" in out.stderr
