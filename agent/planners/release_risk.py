"""Release summaries and the stated thresholds that make a release high, medium or low risk.

High: a test failure in a critical area, an error rate or p95 latency past the high bar, or a
risky change shipping with failing tests. Medium: any other test failure, metrics past the medium
bar, a risky change, or missing data (a release we cannot see fully is never called low). Low:
everything else. Every finding says which threshold it crossed, so a report explains itself.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.domain.types import Alert

Severity = Literal["high", "medium", "low"]


class FailedTest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = ""
    area: str = ""


class CiResults(BaseModel):
    model_config = ConfigDict(extra="ignore")

    passed: int = Field(0, ge=0)
    failed: int = Field(0, ge=0)
    skipped: int = Field(0, ge=0)
    failures: list[FailedTest] = Field(default_factory=list)


class DeploymentMetrics(BaseModel):
    model_config = ConfigDict(extra="ignore")

    error_rate: float | None = Field(None, ge=0, le=1)
    response_time_p95: float | None = Field(None, ge=0)  # milliseconds


class ReleaseSummary(BaseModel):
    """GET /release-summary, as the detective spec shows it (extra fields are ignored)."""

    model_config = ConfigDict(extra="ignore")

    version: str
    changes: list[str] = Field(default_factory=list)
    tests: CiResults | None = None
    deployment_metrics: DeploymentMetrics | None = None


class RiskThresholds(BaseModel):
    """The stated thresholds (override them in config/release_risk.yaml)."""

    model_config = ConfigDict(extra="forbid")

    # Failing tests in these areas make a release high risk.
    critical_areas: list[str] = Field(
        default_factory=lambda: ["payments", "checkout", "billing", "auth", "authentication", "security", "data"]
    )
    # A change whose description holds one of these is risky (high with failing tests, else medium).
    risky_change_words: list[str] = Field(
        default_factory=lambda: ["payment", "billing", "auth", "login", "migration", "schema", "security", "encryption"]
    )
    error_rate_high: float = 0.05  # the deployment's error rate at or above this: high risk
    error_rate_medium: float = 0.01  # at or above this: medium
    p95_high_ms: float = 1000  # p95 latency at or above this: high risk
    p95_medium_ms: float = 500  # at or above this: medium


class Assessment(BaseModel):
    release_id: str
    severity: Severity
    findings: list[str]


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def assess(release_id: str, summary: ReleaseSummary, t: RiskThresholds) -> Assessment:
    """Classify one release summary against the thresholds; findings are ordered most serious first."""
    high: list[str] = []
    medium: list[str] = []
    critical = {a.lower() for a in t.critical_areas}
    risky = [c for c in summary.changes if any(w in c.lower() for w in t.risky_change_words)]
    tests, metrics = summary.tests, summary.deployment_metrics

    if tests is None:
        medium.append("No test results were reported, so test health is unknown.")
    elif tests.failed:
        areas = sorted({f.area.lower() for f in tests.failures if f.area})
        in_critical = [a for a in areas if a in critical]
        if in_critical:
            high.append(f"{tests.failed} failing test(s), including critical area(s): {', '.join(in_critical)}.")
        elif risky:
            high.append(f"{tests.failed} failing test(s) alongside risky change(s).")
        else:
            where = f" in {', '.join(areas)}" if areas else ""
            medium.append(f"{tests.failed} failing test(s){where} ({tests.passed} passed).")

    if metrics is None:
        medium.append("No deployment metrics were reported (error rate, p95 latency).")
    else:
        rate, p95 = metrics.error_rate, metrics.response_time_p95
        if rate is None:
            medium.append("The error rate is missing from the deployment metrics.")
        elif rate >= t.error_rate_high:
            high.append(f"Error rate {_pct(rate)} is at or above the {_pct(t.error_rate_high)} limit.")
        elif rate >= t.error_rate_medium:
            medium.append(f"Error rate {_pct(rate)} is above the {_pct(t.error_rate_medium)} comfort level.")
        if p95 is None:
            medium.append("p95 response time is missing from the deployment metrics.")
        elif p95 >= t.p95_high_ms:
            high.append(f"p95 response time {p95:g} ms is at or above the {t.p95_high_ms:g} ms limit.")
        elif p95 >= t.p95_medium_ms:
            medium.append(f"p95 response time {p95:g} ms is above {t.p95_medium_ms:g} ms.")

    if risky:
        medium.append(f"Risky change(s): {'; '.join(risky)}.")

    severity: Severity = "high" if high else "medium" if medium else "low"
    findings = high + medium or ["All tests pass, metrics are within thresholds and no risky changes were found."]
    return Assessment(release_id=release_id, severity=severity, findings=findings)


def risk_alert(session_id: str, report: dict[str, Any]) -> Alert:
    """The admin alert for a high-severity risk report (raised after the turn commits)."""
    findings = [str(f) for f in report.get("findings", [])]
    return Alert(
        kind="risk_report",
        session_id=session_id,
        summary=f"Release {report.get('release_id')} assessed HIGH risk (report {report.get('id')}): "
        + (findings[0] if findings else "see the report"),
        details={"report_id": report.get("id"), "release_id": report.get("release_id"), "findings": findings},
        dedupe_key=f"risk_report:{report.get('release_id')}:high",
    )
