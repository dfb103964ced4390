"""Every shipped conversation suite runs through the real router on a real SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.app import App
from agent.context.telemetry import TelemetrySink
from agent.eval.runner import run_scenario
from agent.eval.suite import load_suite
from bots.app import build_app
from tests.helpers import REPO

SUITES = sorted((REPO / "tests" / "suites").glob("*.yaml"))
CASES = [(path, sc.id) for path in SUITES for sc in load_suite(path).scenarios]


@pytest.mark.parametrize(("path", "scenario_id"), CASES, ids=[f"{p.stem}/{i}" for p, i in CASES])
async def test_scenario(path: Path, scenario_id: str, db_url: str) -> None:
    suite = load_suite(path)
    scenario = next(s for s in suite.scenarios if s.id == scenario_id)

    config_dir, data_dir = REPO / (suite.config_dir or "config"), REPO / (suite.data_dir or "data")

    async def factory(sink: TelemetrySink) -> App:
        return build_app(config_dir, data_dir, db_url, telemetry=sink)

    result = await run_scenario(suite.name, scenario, factory)
    assert result.passed, "\n".join(
        f"turn {f.turn} {f.key}: expected {f.expected!r}, got {f.got!r}" for f in result.failures
    )


def test_suites_cover_the_spec() -> None:
    ids = {sc_id for _, sc_id in CASES}
    assert {
        "single_turn_complete",
        "status_multi_turn",
        "telemetry_stages",
        "unknown_offers_human",
        "restart_between_turns",
        "not_found_then_retry",
        "urgent_order_interrupts_ticket",
    } <= ids
