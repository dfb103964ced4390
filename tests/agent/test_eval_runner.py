"""The eval runner builds the app once per run; each scenario gets a fresh session; restart rebuilds."""

from __future__ import annotations

from agent.app import App
from agent.context.telemetry import TelemetrySink
from agent.eval.runner import run_suites
from agent.eval.suite import load_suite
from bots.app import build_app
from tests.helpers import REPO


async def test_one_app_per_run_a_new_one_per_restart_and_a_session_per_scenario(db_url: str) -> None:
    suites = [load_suite(REPO / "tests" / "suites" / name) for name in ("orders.yaml", "refunds.yaml")]
    built: list[App] = []

    async def factory(sink: TelemetrySink) -> App:
        built.append(build_app(REPO / "config", REPO / "data", db_url, telemetry=sink))
        return built[-1]

    results, summary = await run_suites(suites, factory)
    restarts = sum(1 for s in suites for sc in s.scenarios for t in sc.turns if t.restart)
    assert restarts >= 1
    assert len(built) == 1 + restarts  # not one per scenario
    assert summary["failed"] == 0, [(r.id, r.failures) for r in results if not r.passed]
    probe = build_app(REPO / "config", REPO / "data", db_url)
    rows = await probe.store.fetch("SELECT id FROM sessions")  # type: ignore[attr-defined]
    await probe.aclose()
    scenarios = sum(len(s.scenarios) for s in suites)
    assert len({r.id for r in rows}) == scenarios  # each scenario talked in its own session
