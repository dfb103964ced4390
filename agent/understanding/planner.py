"""The template planner: plans from config/intents.yaml and phrases answers from tool results."""

from __future__ import annotations

from agent.config import BotConfig
from agent.types import AskUser, Goal, Intent, Plan, Respond, SessionState, ToolCall, ToolResult
from agent.understanding.templates import render


class TemplatePlanner:
    def __init__(self, config: BotConfig):
        self.specs = {s.id: s for s in config.intents.intents}
        self.slots = config.intents.slots
        self.messages = config.intents.messages

    def question(self, intent_id: str, slot: str) -> str:
        spec = self.specs.get(intent_id)
        if spec and slot in spec.templates.ask:
            return spec.templates.ask[slot]
        label = self.slots[slot].label if slot in self.slots else slot.replace("_", " ")
        return f"What's your {label}?"

    def tool_args(self, goal: Goal, intent: Intent) -> dict:
        spec = self.specs[intent.id]
        if not spec.tool_args:
            allowed = set(intent.required_params) | set(intent.optional_params)
            return {k: v for k, v in goal.slots.items() if k in allowed}
        args = {}
        for name, template in spec.tool_args.items():
            value = render(template, goal.slots)
            if "{" not in value:  # a placeholder with no value: leave the argument to its default
                args[name] = value
        return args

    async def plan(self, goal: Goal, intent: Intent, state: SessionState) -> Plan:
        if goal.missing:
            return Plan(
                intent_id=intent.id, goal_id=goal.id, steps=[AskUser(param=goal.missing[0], prompt=goal.next_question)]
            )
        spec = self.specs[intent.id]
        if intent.tool is None:
            text = render(spec.templates.answer.get("default", ""), goal.slots)
            return Plan(intent_id=intent.id, goal_id=goal.id, steps=[Respond(when="post", message=text)])
        steps: list = []
        if spec.templates.pre:
            steps.append(Respond(when="pre", message=render(spec.templates.pre, goal.slots)))
        steps.append(ToolCall(tool_name=intent.tool, params=self.tool_args(goal, intent)))
        steps.append(Respond(when="post"))
        return Plan(intent_id=intent.id, goal_id=goal.id, steps=steps)

    async def answer(self, goal: Goal, intent: Intent, results: list[ToolResult]) -> str:
        templates = self.specs[intent.id].templates
        result = results[-1]
        values = {**goal.slots, **(result.data or {})}
        if result.success:
            outcome = str(values.get("status", "default"))
            template = templates.answer.get(outcome) or templates.answer.get("default", "Done.")
        else:
            template = (
                templates.error.get(result.error_code or "")
                or templates.error.get("default")
                or self.messages.tool_error
            )
        return render(template, values)
