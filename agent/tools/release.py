"""Release tools: fetch a release summary, list the releases, file a risk report (once per release, severity
and day: asking again the same day returns the report already filed and alerts nobody)."""

from __future__ import annotations

import hashlib
import re
from typing import Literal

from pydantic import Field, ValidationError

from agent.domain.contexts import ToolContext
from agent.domain.types import SideEffect
from agent.errors import DataSourceError, ToolError
from agent.planners.release_risk import ReleaseSummary, risk_alert
from agent.sources import ReleaseSource
from agent.storage import RiskReports
from agent.tools.registry import Tool, ToolDeps, ToolOutput, ToolParams, tool_factory

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


class ListParams(ToolParams):
    pass


def _numbers(release_id: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", release_id.split("-", 1)[0]))


def by_version(ids: list[str]) -> list[str]:
    """Newest first: 2.5.0-rc1, 2.4.1, 2.4.0, 2.3.9 (a pre-release after its own version's final)."""
    return sorted(ids, key=lambda r: (_numbers(r), "-" not in r), reverse=True)


def nearest(asked: str, known: list[str], count: int = 3) -> list[str]:
    """The releases someone asking for `asked` most likely meant: those it is the start of ("2.3" ->
    2.3.9, "2.5.0" -> 2.5.0-rc1), else the closest by major, minor and patch number."""
    started = [r for r in known if r.startswith(asked + ".") or r.startswith(asked + "-")]
    if started:
        return by_version(started)[:count]
    want = _numbers(asked)
    if not want:
        return []

    def distance(r: str) -> tuple[int, ...]:
        have = _numbers(r)
        return tuple(abs(a - b) for a, b in zip(want + (0,) * 3, have + (0,) * 3, strict=False))[:3]

    return sorted(known, key=distance)[:count]


@tool_factory
def release_tools(deps: ToolDeps) -> list[Tool]:
    """The release tools over the release source; without `deps.risk_reports` (reports already
    filed) every assessment files a new report."""
    if deps.releases is None:
        return []
    releases = _Releases(deps.releases, deps.risk_reports)
    return [
        Tool(
            "get_release_summary",
            "Get a release's summary: changes, test results and deployment metrics (error rate, p95).",
            ReleaseParams,
            releases.get_release_summary,
        ),
        Tool(
            "list_releases",
            "List the releases whose risk can be assessed, newest first.",
            ListParams,
            releases.list_releases,
        ),
        Tool(
            "file_risk_report",
            "File a risk report for a release with a severity (high, medium, low) and the key findings.",
            RiskReportParams,
            releases.file_risk_report,
            side_effect=True,
            records=("risk_report",),
            alerts=("risk_report",),
        ),
    ]


class _Releases:
    """The release tools' handlers, over the release source and the reports already filed."""

    def __init__(self, source: ReleaseSource, reports: RiskReports | None) -> None:
        self.source = source
        self.reports = reports

    async def get_release_summary(self, p: ReleaseParams, ctx: ToolContext) -> ToolOutput:
        release_id = canonical_release(p.release_id)
        try:
            raw = await self.source.get_release(release_id)
        except DataSourceError as e:
            raise ToolError("get_release_summary", str(e), code="source_unavailable") from e
        if raw is None:
            close = nearest(release_id, await self._known("get_release_summary"))
            raise ToolError(
                "get_release_summary",
                f"Release {release_id} not found" + (f"; nearest: {', '.join(close)}" if close else ""),
                code="not_found",
                data={"nearest": close} if close else None,
            )
        try:
            summary = ReleaseSummary.model_validate(raw)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            problem = f"malformed summary ({where}: {first['msg']})"
            raise ToolError("get_release_summary", problem, code="malformed") from e
        return ToolOutput(data={"release_id": release_id, **summary.model_dump()})

    async def list_releases(self, p: ListParams, ctx: ToolContext) -> ToolOutput:
        releases = by_version(await self._known("list_releases"))
        status = "listed" if releases else "empty"
        return ToolOutput(data={"releases": releases, "count": len(releases), "status": status})

    async def file_risk_report(self, p: RiskReportParams, ctx: ToolContext) -> ToolOutput:
        release_id = canonical_release(p.release_id)
        today = ctx.now.date()
        filed = await self.reports.risk_report_on(release_id, today, p.severity) if self.reports else None
        if filed is not None:
            # The same assessment today: the report stands, and the admins heard about it already.
            data = {"report_id": filed["id"], "release_id": release_id, "severity": p.severity, "filed_before": True}
            return ToolOutput(data=data)
        # One report per release, severity and day, whoever asks: two workers racing write one row.
        digest = hashlib.sha256(f"{release_id}|{p.severity}|{today.isoformat()}".encode())
        report_id = f"R-{digest.hexdigest()[:8].upper()}"
        row = {
            "id": report_id,
            "session_id": ctx.session_id,
            "release_id": release_id,
            "severity": p.severity,
            "findings": list(p.findings),
            "created_at": ctx.now.isoformat(),
        }
        return ToolOutput(
            data={"report_id": report_id, "release_id": release_id, "severity": p.severity, "filed_before": False},
            effects=[SideEffect(kind="risk_report", key=report_id, data=row)],
            alerts=[risk_alert(ctx.session_id, row)] if p.severity == "high" else [],
        )

    async def _known(self, tool: str) -> list[str]:
        try:
            return await self.source.list_releases()
        except DataSourceError as e:
            raise ToolError(tool, str(e), code="source_unavailable") from e
