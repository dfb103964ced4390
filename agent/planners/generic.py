"""The template planner: plans from config/intents.yaml and phrases answers from tool results."""

from __future__ import annotations

from agent.config.schema import BotConfig
from agent.context.log import TurnLog
from agent.conversation.session import Goal
from agent.domain.contexts import AgentRequest
from agent.domain.types import AskUser, Confirm, Intent, Plan, Respond, ToolCall, ToolResult
from agent.planners.base import Planner
from agent.planners.registry import PlannerNeeds, planner
from agent.templates import filled, render


class TemplatePlanner:
    reads_preferences = False  # see the Planner Protocol

    def __init__(self, config: BotConfig, currency: str = "$"):
        self.currency = currency  # the store's, for {amount|money}
        self.specs = {s.id: s for s in config.intents.intents}
        self.slots = config.intents.slots
        self.messages = config.intents.messages
        self.choosing = config.intents.vocabulary.choosing

    def question(self, intent_id: str, slot: str) -> str:
        spec = self.specs.get(intent_id)
        if spec and slot in spec.templates.ask:
            return spec.templates.ask[slot]
        label = self.slots[slot].label if slot in self.slots else slot.replace("_", " ")
        return render(self.messages.ask_slot, {"label": label}, self.currency)

    def tool_args(self, goal: Goal, intent: Intent) -> dict:
        spec = self.specs[intent.id]
        if not spec.tool_args:
            allowed = set(intent.required_params) | set(intent.optional_params)
            return {k: v for k, v in goal.slots.items() if k in allowed}
        return filled(spec.tool_args, goal.slots, self.currency)  # an argument with no value: its default

    async def plan(self, request: AgentRequest, turn: TurnLog | None = None) -> Plan:
        goal, intent = request.goal, request.intent
        spec = self.specs[intent.id]
        plan = Plan(intent_id=intent.id, goal_id=goal.id)
        if intent.kind == "chat":
            waiting = request.me.active_goal
            key = "waiting" if waiting and waiting.next_question else "default"
            text = render(
                spec.templates.answer.get(key) or spec.templates.answer.get("default", ""), goal.slots, self.currency
            )
            if key == "waiting" and waiting is not None:
                text = f"{text} {waiting.next_question}"
            plan.steps = [Respond(when="post", message=text)]
        elif goal.missing:
            plan.steps = [AskUser(param=goal.missing[0], prompt=goal.next_question)]
        elif request.results:
            self._conclude(plan, goal, intent, request.results[-1])
        elif intent.tool is None:
            plan.steps = [
                Respond(
                    when="post", message=render(spec.templates.answer.get("default", ""), goal.slots, self.currency)
                )
            ]
            plan.goal_status = "done"
        else:
            if spec.templates.pre:
                plan.steps.append(Respond(when="pre", message=render(spec.templates.pre, goal.slots, self.currency)))
            args = self.tool_args(goal, intent)
            if spec.templates.confirm:
                plan.steps.append(Confirm(prompt=spec.templates.confirm, tool=intent.tool, params=args))
            else:
                plan.steps.append(ToolCall(tool_name=intent.tool, params=args))
        return plan

    def _conclude(self, plan: Plan, goal: Goal, intent: Intent, result: ToolResult) -> None:
        """Second pass: phrase the answer from the tool result, and settle the goal."""
        templates = self.specs[intent.id].templates
        values = {**goal.slots, **(result.data or {})}
        if result.success:
            outcome = str(values.get("status", "default"))
            template = templates.answer.get(outcome) or templates.answer.get("default", self.messages.done)
            plan.steps = [Respond(when="post", message=render(template, values, self.currency))]
            plan.goal_status = "done"
            return
        code = result.error_code or ""
        template = templates.error.get(code) or templates.error.get("default") or self.messages.tool_error
        text = render(template, values, self.currency)
        settle_failure(plan, text, intent.retry_slot_on.get(code))


def settle_failure(plan: Plan, text: str, retry_slot: str | None) -> None:
    """A tool failed: ask for `retry_slot` again when the value was wrong (no such order or
    release), else tell the user and fail the goal."""
    if retry_slot:
        plan.slots_patch = {retry_slot: None}
        plan.steps = [AskUser(param=retry_slot, prompt=text)]
    else:
        plan.steps = [Respond(when="error", message=text)]
        plan.goal_status = "failed"


@planner("template")
def template_planner(needs: PlannerNeeds) -> Planner:
    """An agent that only asks for its slots and answers from its intents' templates."""
    return needs.templates
