"""The release-risk detective: thresholds, the stored report, the admin alert, robust phrasings."""

from __future__ import annotations

import json

import pytest

from adapters.storage.sql import SqlStore
from agent.domain.types import Alert
from agent.planners.release_risk import ReleaseSummary, RiskThresholds, assess
from bots.alerts import AlertFanout
from bots.app import build_app
from tests.helpers import REPO, say


class Admins:
    def __init__(self) -> None:
        self.alerts: list[Alert] = []

    async def notify(self, alert: Alert) -> None:
        self.alerts.append(alert)


def summary(**kw: object) -> ReleaseSummary:
    base: dict = {
        "version": "v1.0.0",
        "changes": ["Tweaked a label"],
        "tests": {"passed": 10, "failed": 0},
        "deployment_metrics": {"error_rate": 0.001, "response_time_p95": 200},
    }
    return ReleaseSummary.model_validate(base | kw)


@pytest.mark.parametrize(
    ("kw", "severity"),
    [
        ({}, "low"),
        ({"tests": {"passed": 9, "failed": 1, "failures": [{"name": "t", "area": "payments"}]}}, "high"),
        ({"tests": {"passed": 9, "failed": 1, "failures": [{"name": "t", "area": "ui"}]}}, "medium"),
        ({"deployment_metrics": {"error_rate": 0.05, "response_time_p95": 200}}, "high"),  # at the bar
        ({"deployment_metrics": {"error_rate": 0.049, "response_time_p95": 200}}, "medium"),
        ({"deployment_metrics": {"error_rate": 0.0, "response_time_p95": 1000}}, "high"),
        ({"deployment_metrics": {"error_rate": 0.0, "response_time_p95": 499}}, "low"),
        ({"changes": ["Schema migration for users"]}, "medium"),
        ({"changes": ["Auth rewrite"], "tests": {"passed": 9, "failed": 1}}, "high"),
        ({"deployment_metrics": None}, "medium"),
        ({"tests": None}, "medium"),
        ({"deployment_metrics": {"response_time_p95": 100}}, "medium"),  # error rate missing
    ],
)
def test_stated_thresholds(kw: dict, severity: str) -> None:
    result = assess("1.0.0", summary(**kw), RiskThresholds())
    assert result.severity == severity
    assert result.findings and all(f.endswith(".") for f in result.findings)


def test_thresholds_are_configurable() -> None:
    strict = RiskThresholds(error_rate_high=0.0005)
    assert assess("1.0.0", summary(), strict).severity == "high"


async def test_high_risk_report_is_stored_and_alerts_admins(db_url: str) -> None:
    admins = Admins()
    async with build_app(REPO / "config", REPO / "data", db_url, alerts=AlertFanout([admins])) as app:
        router = app.router
        response, delivered = await say(router, "how risky is release 2.4.1?")
    assert response.alerts == ["risk_report"]
    assert [m.kind for m in delivered] == ["pre", "answer"]
    [alert] = admins.alerts
    assert alert.kind == "risk_report" and "2.4.1" in alert.summary and "HIGH" in alert.summary
    assert alert.title == "High-risk release report"  # agents.yaml's title, the one every channel shows
    assert any("payments" in f for f in alert.details["findings"])
    store = SqlStore(db_url)
    rows = await store.fetch("SELECT id, release_id, severity, findings, session_id FROM risk_reports")
    await store.aclose()
    [row] = rows
    assert (row.release_id, row.severity, row.session_id) == ("2.4.1", "high", "s-1")
    assert row.id in response.text
    assert any("6.2%" in f for f in json.loads(row.findings))


async def test_low_and_medium_reports_are_stored_without_alerts(db_url: str) -> None:
    admins = Admins()
    async with build_app(REPO / "config", REPO / "data", db_url, alerts=AlertFanout([admins])) as app:
        router = app.router
        low, _ = await say(router, "should we ship 2.3.9", session="a")
        medium, _ = await say(router, "risk report for v2.4.0", session="b")
    assert low.alerts == [] and medium.alerts == [] and admins.alerts == []
    store = SqlStore(db_url)
    rows = await store.fetch("SELECT release_id, severity FROM risk_reports ORDER BY release_id")
    await store.aclose()
    assert [(r.release_id, r.severity) for r in rows] == [("2.3.9", "low"), ("2.4.0", "medium")]


@pytest.mark.parametrize(
    "text",
    [
        "how risky is release 2.4.1",
        "risk report for v2.4.1",
        "should we ship 2.4.1?",
        "Is V2.4.1 safe to deploy",
        "  what's the risk on 2.4.1 ??",
        "2.4.1 - ready to release?",
        "can you assess the risk of version 2.4.1 please",
    ],
)
async def test_ordinary_phrasings(router, text: str) -> None:  # type: ignore[no-untyped-def]
    response, _ = await say(router, text)
    assert response.intent_id == "release_risk"
    assert [r.tool for r in response.tool_results] == ["get_release_summary", "file_risk_report"]
    assert "HIGH risk" in response.text


async def test_a_bare_version_answers_the_question(router) -> None:  # type: ignore[no-untyped-def]
    first, _ = await say(router, "how risky is the next release")
    assert first.missing_param == "release_id"
    second, _ = await say(router, "2.3.9")
    assert "LOW risk" in second.text


async def test_the_same_release_asked_again_the_same_day_is_one_report_and_one_alert(db_url: str) -> None:
    """Two workers (each with its own de-duplicating alert fan-out) and two conversations: the report
    filed first stands, its id is the answer both times, and the admins hear about it once."""
    first_admins, second_admins = Admins(), Admins()
    async with build_app(REPO / "config", REPO / "data", db_url, alerts=AlertFanout([first_admins])) as app:
        first, _ = await say(app.router, "how risky is release 2.4.1?", session="monday")
        again, _ = await say(app.router, "and how risky is 2.4.1 now?", session="monday")
    async with build_app(REPO / "config", REPO / "data", db_url, alerts=AlertFanout([second_admins])) as app:
        other, _ = await say(app.router, "risk report for v2.4.1 please", session="tuesday-standup")
    store = SqlStore(db_url)
    rows = await store.fetch("SELECT id FROM risk_reports")
    await store.aclose()
    [row] = rows
    assert all(row.id in r.text for r in (first, again, other))
    assert "I filed risk report" in first.text
    assert all("filed earlier today" in r.text and "haven't alerted them again" in r.text for r in (again, other))
    assert first.alerts == ["risk_report"] and again.alerts == [] and other.alerts == []
    assert len(first_admins.alerts) == 1 and second_admins.alerts == []


@pytest.mark.parametrize(
    ("asked", "suggested"),
    [("2.3", "Did you mean 2.3.9?"), ("2.5.0", "Did you mean 2.5.0-rc1?"), ("2.4.2", "2.4.1")],
)
async def test_an_unknown_release_suggests_the_nearest_known_ones(router, asked: str, suggested: str) -> None:  # type: ignore[no-untyped-def]
    response, _ = await say(router, f"how risky is release {asked}?")
    assert f"I couldn't find release {asked}." in response.text and suggested in response.text
    assert response.missing_param == "release_id"  # the suggestion is a question: "2.3.9" answers it
    answered, _ = await say(router, suggested.removeprefix("Did you mean ").rstrip("?").split(",")[0].split(" or ")[0])
    assert "risk" in answered.text and "report" in answered.text


def test_nearest_releases_by_prefix_then_by_version_distance() -> None:
    from agent.tools.release import by_version, nearest

    known = ["2.4.1", "2.4.0", "2.3.9", "2.1.0", "2.5.0-rc1", "3.0.0-corrupt"]
    assert nearest("2.3", known) == ["2.3.9"]
    assert nearest("2.5.0", known) == ["2.5.0-rc1"]
    assert nearest("2.4.2", known)[0] == "2.4.1"
    assert nearest("banana", known) == []
    assert by_version(known) == ["3.0.0-corrupt", "2.5.0-rc1", "2.4.1", "2.4.0", "2.3.9", "2.1.0"]


async def test_which_releases_can_you_check_is_answered_from_the_list_newest_first() -> None:
    """`release_list` (config/intents.yaml): the release agent asks for list_releases, the tool reads the
    release source, and the answer names every release, newest first."""
    from adapters.data.releases import JSONReleaseSource
    from agent.config.files import load_config
    from agent.config.intents import IntentsRegistry
    from agent.conversation.session import Goal, SessionState
    from agent.domain.contexts import AgentRequest, ToolContext
    from agent.domain.types import Respond, ToolCall, ToolResult
    from agent.planners.release import ReleasePlanner
    from agent.tools.registry import ToolDeps
    from agent.tools.release import ListParams, release_tools

    config = load_config(REPO / "config")
    intent = IntentsRegistry(config).get("release_list")
    assert intent is not None
    planner = ReleasePlanner(config)
    goal = Goal(id="g", type="release.release_list", agent="release", intent_id="release_list")
    request = AgentRequest(goal=goal, intent=intent, state=SessionState(session_id="s"))
    first = await planner.plan(request)
    assert [type(s) for s in first.steps] == [ToolCall] and first.steps[0].tool_name == "list_releases"
    source = JSONReleaseSource(REPO / "data" / "releases.json")
    [tool] = [t for t in release_tools(ToolDeps(releases=source)) if t.name == "list_releases"]
    output = await tool.handler(ListParams(), ToolContext(session_id="s", interaction_id="i", agent="release"))
    result = ToolResult(tool="list_releases", success=True, data=output.data)
    second = await planner.plan(request.model_copy(update={"results": [result]}))
    [answer] = second.steps
    assert isinstance(answer, Respond)
    assert "these 6 releases, newest first: 3.0.0-corrupt, 2.5.0-rc1, 2.4.1, 2.4.0, 2.3.9 and 2.1.0" in answer.message
