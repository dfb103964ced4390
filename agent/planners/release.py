"""The release agent in rules mode: fetch the summary, classify it, file the report, answer.

Pass 1 asks for the release or requests the intent's tool (the summary); pass 2 assesses the
summary against the stated thresholds and requests the tool the intent `uses` as its `report`;
pass 3 answers from both results. Wording
comes from the intent's templates in config/intents.yaml (answer keyed by severity, error by code).
"""

from __future__ import annotations

from pathlib import Path

from agent.config.files import load_yaml_model
from agent.config.schema import BotConfig
from agent.context.log import TurnLog
from agent.domain.contexts import AgentRequest
from agent.domain.types import AskUser, Plan, Respond, ToolCall, ToolResult
from agent.planners.base import Planner
from agent.planners.generic import TemplatePlanner, settle_failure
from agent.planners.registry import PlannerNeeds, planner
from agent.planners.release_risk import Assessment, ReleaseSummary, RiskThresholds, assess
from agent.templates import render


class ReleasePlanner:
    """
    Args:
        config: the bot config (templates for questions and answers).
        thresholds: what makes a release high, medium or low risk.
    """

    reads_preferences = False  # see the Planner Protocol

    def __init__(self, config: BotConfig, thresholds: RiskThresholds | None = None):
        self.templates = TemplatePlanner(config)
        self.thresholds = thresholds or RiskThresholds()

    def question(self, intent_id: str, slot: str) -> str:
        return self.templates.question(intent_id, slot)

    async def plan(self, request: AgentRequest, turn: TurnLog | None = None) -> Plan:
        goal, intent = request.goal, request.intent
        # The assessment: the intent's tool fetches the summary, the one it `uses` as `report` files it.
        summary_tool, report_tool = intent.tool, intent.uses.get("report")
        if summary_tool is None or report_tool is None:
            return await self.templates.plan(request, turn)  # any other intent of this agent: plain templates
        spec = self.templates.specs[intent.id].templates
        plan = Plan(intent_id=intent.id, goal_id=goal.id)
        if goal.missing:
            plan.steps = [AskUser(param=goal.missing[0], prompt=goal.next_question)]
            return plan
        release_id = str(goal.slots["release_id"])
        by_tool = {r.tool: r for r in request.results}
        summary, report = by_tool.get(summary_tool), by_tool.get(report_tool)
        values: dict = {"release_id": release_id}
        if summary is None:
            if spec.pre:
                plan.steps.append(Respond(when="pre", message=render(spec.pre, values)))
            plan.steps.append(ToolCall(tool_name=summary_tool, params={"release_id": release_id}))
            plan.reasoning = "fetch the release summary before judging it"
            return plan
        if not summary.success:
            return self._failed(plan, summary, values, retry_slot=intent.retry_slot_on.get(summary.error_code or ""))
        assessment = self._assess(summary)
        values |= {"severity": assessment.severity, "findings": _bullets(assessment.findings)}
        plan.reasoning = f"{assessment.severity}: " + " ".join(assessment.findings)
        if report is None:
            plan.steps = [ToolCall(tool_name=report_tool, params=assessment.model_dump())]
            return plan
        if not report.success:
            return self._failed(plan, report, values, code="report_failed")
        values |= report.data or {}
        # Asked again the same day (in another conversation, or replayed from this one's ledger): the answer
        # names the report already filed instead of claiming a new one.
        filed_before = values.get("filed_before") or report.replayed
        again = spec.answer.get(f"{assessment.severity}_again") if filed_before else None
        fallback = self.templates.messages.risk_answer
        template = again or spec.answer.get(assessment.severity) or spec.answer.get("default", fallback)
        plan.steps = [Respond(when="post", message=render(template, values))]
        plan.goal_status = "done"
        return plan

    def _assess(self, result: ToolResult) -> Assessment:
        data = dict(result.data or {})
        release_id = str(data.pop("release_id", ""))
        return assess(release_id, ReleaseSummary.model_validate(data), self.thresholds)

    def _failed(
        self, plan: Plan, result: ToolResult, values: dict, *, retry_slot: str | None = None, code: str | None = None
    ) -> Plan:
        errors = self.templates.specs[plan.intent_id or ""].templates.error
        code = code or result.error_code or ""
        details = result.data or {}
        # An unknown release with known ones near it: the answer suggests them (error `not_found_nearest`).
        suggest = errors.get(f"{code}_nearest") if details.get("nearest") else None
        template = suggest or errors.get(code) or errors.get("default") or self.templates.messages.tool_error
        text = render(template, {**values, **details, "error": result.error or ""})
        settle_failure(plan, text, retry_slot)
        return plan


def _bullets(findings: list[str]) -> str:
    return "\n".join(f"- {f}" for f in findings)


@planner("release")
def release_planner(needs: PlannerNeeds) -> Planner:
    """Release risk, with the project's thresholds from release_risk.yaml (the defaults without one)."""
    file = Path(needs.config.directory) / "release_risk.yaml"
    return ReleasePlanner(needs.config, load_yaml_model(file, RiskThresholds, optional=True))
