"""`agentbot eval` reads well: every line fits 100 columns, PASS/FAIL in colour on a terminal and only there."""

from __future__ import annotations

import os
import sys

import pexpect

from tests.bots.test_cli import agentbot
from tests.helpers import REPO

SUITES = [str(p) for p in sorted((REPO / "tests" / "suites").glob("*.yaml"))]


def test_the_report_fits_100_columns_and_a_pipe_gets_no_colour(db_url: str) -> None:
    out = agentbot("eval", *SUITES, "--db-url", db_url)
    assert out.returncode == 0, out.stderr
    assert max(len(line) for line in out.stdout.splitlines()) <= 100
    assert "\x1b[" not in out.stdout and "PASS  orders/status_multi_turn" in out.stdout
    assert out.stdout.count("  metric ") >= 2  # twelve suites: the table continues in a second block


def test_a_terminal_sees_pass_in_green() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTBOT_")}
    child = pexpect.spawn(
        sys.executable, ["-m", "bots.cli", "eval", str(REPO / "tests" / "suites" / "smalltalk.yaml")],
        cwd=str(REPO), env=env, encoding="utf-8", timeout=60,
    )  # fmt: skip
    child.expect_exact("\x1b[32mPASS\x1b[0m  smalltalk/")
    child.expect(pexpect.EOF)


def test_the_metrics_table_fits_100_columns_and_keeps_whole_suite_names() -> None:
    import io

    from agent.eval import baseline as baselines
    from bots.cli.eval_report import print_metrics

    names = ["conversation_control", "recommendation_followups", "orders", "goal_scheduling", "handoff"]
    metrics = {"pass_rate": 1.0, "turns_to_resolution": 2.5}
    run = baselines.Baseline.model_validate(
        {"name": "now", "overall": metrics, "suites": dict.fromkeys(names, metrics)}
    )
    out = io.StringIO()
    print_metrics(run, out)
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 100
    assert all(any(name in line for line in lines) for name in names)
