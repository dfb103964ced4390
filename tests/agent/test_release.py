"""The release-risk detective: thresholds, the stored report, the admin alert, robust phrasings."""

from __future__ import annotations

import json

import pytest

from adapters.storage.sql import SqlStore
from agent.planners.release_risk import ReleaseSummary, RiskThresholds, assess
from agent.types import Alert
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
