"""The task-manager agent in rules mode: plans the to-do tools from config/intents.yaml.

It follows the agent's constitution (config/agents.yaml): tools only for a clear task request,
deletion only after the user confirms the exact task, and answers in plain words, never tool names.
Deleting looks the task up first, so the confirmation names the task the user is about to lose.
"""

from __future__ import annotations

from agent.domain.contexts import AgentRequest
from agent.domain.types import AskUser, Confirm, Plan, ToolCall
from agent.interfaces import TurnLog
from agent.planners.generic import TemplatePlanner
from agent.planners.render import render

NOT_FOUND = "I couldn't find task {task_number} on your list."


class TaskPlanner(TemplatePlanner):
    async def plan(self, request: AgentRequest, turn: TurnLog | None = None) -> Plan:
        goal, intent = request.goal, request.intent
        if intent.id != "task_delete" or goal.missing:
            return await super().plan(request, turn)
        plan = Plan(intent_id=intent.id, goal_id=goal.id)
        results = request.results
        if not results:
            plan.steps = [ToolCall(tool_name="list_tasks", params={})]
            return plan
        last = results[-1]
        if last.tool != "list_tasks":
            self._conclude(plan, goal, intent, last)
            return plan
        number = str(goal.slots.get("task_number", ""))
        task = next((t for t in (last.data or {}).get("items", []) if str(t.get("number")) == number), None)
        if task is None:
            template = self.specs[intent.id].templates.error.get("not_found", NOT_FOUND)
            plan.slots_patch = {"task_number": None}
            plan.steps = [AskUser(param="task_number", prompt=render(template, goal.slots) + " Which number is it?")]
            return plan
        template = self.specs[intent.id].templates.confirm or "Delete task {number} ({title})?"
        args = self.tool_args(goal, intent)
        plan.steps = [Confirm(prompt=render(template, task), tool=intent.tool or "delete_task", params=args)]
        return plan
