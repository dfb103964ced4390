"""Release tools: fetch a release summary, file a risk report (a database row, once per key)."""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import Field, ValidationError

from agent.contexts import ToolContext
from agent.errors import DataSourceError, ToolError
from agent.interfaces import ReleaseSource
from agent.planners.release_risk import ReleaseSummary, risk_alert
from agent.tools.registry import Tool, ToolOutput, ToolParams
from agent.types import SideEffect, utcnow

RELEASE_ID = r"^v?\d+(\.\d+){1,3}([-+][0-9A-Za-z.-]+)?$"


class ReleaseParams(ToolParams):
    release_id: str = Field(pattern=RELEASE_ID, max_length=64, description="Release version like 2.4.1")


class RiskReportParams(ToolParams):
    release_id: str = Field(pattern=RELEASE_ID, max_length=64)
    severity: Literal["high", "medium", "low"]
    findings: list[str] = Field(min_length=1, max_length=50)


def canonical_release(release_id: str) -> str:
    """`v2.4.1`, `V2.4.1` and `2.4.1` name one release."""
    return release_id.strip().lstrip("vV")


def release_tools(source: ReleaseSource) -> list[Tool]:
    async def get_release_summary(p: ReleaseParams, ctx: ToolContext) -> ToolOutput:
        release_id = canonical_release(p.release_id)
        try:
            raw = await source.get_release(release_id)
        except DataSourceError as e:
            raise ToolError("get_release_summary", str(e), code="source_unavailable") from e
        if raw is None:
            raise ToolError("get_release_summary", f"Release {release_id} not found", code="not_found")
        try:
            summary = ReleaseSummary.model_validate(raw)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            problem = f"malformed summary ({where}: {first['msg']})"
            raise ToolError("get_release_summary", problem, code="malformed") from e
        return ToolOutput(data={"release_id": release_id, **summary.model_dump()})

    async def file_risk_report(p: RiskReportParams, ctx: ToolContext) -> ToolOutput:
        release_id = canonical_release(p.release_id)
        digest = hashlib.sha256(f"{ctx.session_id}|{ctx.interaction_id}|{release_id}|{p.severity}".encode())
        report_id = f"R-{digest.hexdigest()[:8].upper()}"
        row = {
            "id": report_id,
            "session_id": ctx.session_id,
            "release_id": release_id,
            "severity": p.severity,
            "findings": list(p.findings),
            "created_at": utcnow().isoformat(),
        }
        return ToolOutput(
            data={"report_id": report_id, "release_id": release_id, "severity": p.severity},
            effects=[SideEffect(kind="risk_report", key=report_id, data=row)],
            alerts=[risk_alert(ctx.session_id, row)] if p.severity == "high" else [],
        )

    return [
        Tool(
            "get_release_summary",
            "Get a release's summary: changes, test results and deployment metrics (error rate, p95).",
            ReleaseParams,
            get_release_summary,
        ),
        Tool(
            "file_risk_report",
            "File a risk report for a release with a severity (high, medium, low) and the key findings.",
            RiskReportParams,
            file_risk_report,
            side_effect=True,
        ),
    ]
