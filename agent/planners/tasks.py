"""The task-manager agent in rules mode: plans the to-do tools from config/intents.yaml.

It follows the agent's constitution (config/agents.yaml): tools only for a clear task request,
deletion only after the user confirms the exact task, and answers in plain words, never tool names.
Deleting looks the task up first, so the confirmation names the task the user is about to lose.
A task named by its words instead of its number ("mark buy milk as done", "delete the plumber one")
is the one open task whose title shares the most of them.
"""

from __future__ import annotations

from agent.context.log import TurnLog
from agent.domain.contexts import AgentRequest
from agent.domain.types import AskUser, Confirm, Option, Plan, Respond, ToolCall, ToolResult
from agent.planners.base import Planner
from agent.planners.generic import TemplatePlanner
from agent.planners.registry import PlannerNeeds, planner
from agent.templates import render
from agent.text import STOPWORDS, stem, words


def _words(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w not in STOPWORDS}


class TaskPlanner(TemplatePlanner):
    async def plan(self, request: AgentRequest, turn: TurnLog | None = None) -> Plan:
        goal, intent = request.goal, request.intent
        lookup = intent.uses.get("lookup")  # the tool that lists the user's tasks
        # A request that acts on one task and needs nothing else may name the task by its words;
        # naming none ("I've done one of my tasks"), it is asked which, with the open ones listed.
        one_task = lookup and len(intent.required_params) == 1 and goal.missing == intent.required_params
        if one_task and lookup:
            return self._by_title(request, lookup)
        if intent.handling != "look_up_first" or not lookup or goal.missing:
            return await super().plan(request, turn)
        plan = Plan(intent_id=intent.id, goal_id=goal.id)
        results = request.results
        if not results:
            plan.steps = [ToolCall(tool_name=lookup, params={})]
            return plan
        last = results[-1]
        if last.tool != lookup:
            self._conclude(plan, goal, intent, last)
            return plan
        slot = intent.required_params[0]
        number = str(goal.slots.get(slot, ""))
        task = next((t for t in (last.data or {}).get("items", []) if str(t.get("number")) == number), None)
        if task is None:
            template = self.specs[intent.id].templates.error.get("not_found", self.messages.task_not_found)
            plan.slots_patch = {slot: None}
            plan.steps = [AskUser(param=slot, prompt=f"{render(template, goal.slots)} {self.messages.which_task}")]
            return plan
        args = self.tool_args(goal, intent)
        template = self.specs[intent.id].templates.confirm
        if template and intent.tool:
            plan.steps = [Confirm(prompt=template, values=task, tool=intent.tool, params=args)]
        else:
            plan.steps = [ToolCall(tool_name=intent.tool or "", params=args)]
        return plan

    def _naming(self, request: AgentRequest) -> set[str]:
        """The words of the request that could name a task: not the request's own words ("mark",
        "done"), which its description and question in config/intents.yaml use, nor the words that
        point at something listed ("the first one"; the picking ordinals and the follow-ups' pointing words)."""
        spec = self.specs[request.intent.id]
        own = [spec.description, *spec.templates.ask.values(), *spec.goal_name, *spec.examples]
        if any(other.follow_up is not None for other in self.specs.values()):
            own += list(self.choosing.ordinals)
        for other in self.specs.values():
            if other.follow_up is not None:
                own += other.follow_up.pointing
        return _words(request.text) - _words(" ".join(own))

    def _by_title(self, request: AgentRequest, lookup: str) -> Plan:
        goal, intent = request.goal, request.intent
        slot = intent.required_params[0]
        plan = Plan(intent_id=intent.id, goal_id=goal.id)
        last = request.results[-1] if request.results else None
        if last is None:
            plan.steps = [ToolCall(tool_name=lookup, params={"show": "open"})]
            return plan
        if not (last.data or {}).get("items"):
            # Nothing on the list to name: no number to ask for either.
            plan.steps = [
                Respond(
                    when="post",
                    message=self.specs[intent.id].templates.error.get("empty", self.messages.task_list_empty),
                )
            ]
            plan.goal_status = "done"
            return plan
        task = _named(last, self._naming(request))
        if task is None:
            # "I've done one of my tasks": which one, with the open ones to pick from.
            items = (last.data or {}).get("items", [])
            listed = "; ".join(f"{t['number']}. {t['title']}" for t in items)
            prompt = f"{goal.next_question} {render(self.messages.open_tasks, {'tasks': listed})}"
            options = [Option(value=str(t["number"]), label=str(t["title"])) for t in items]
            plan.steps = [AskUser(param=slot, prompt=prompt, options=options)]
            return plan
        plan.slots_patch = {slot: task["number"]}
        args = self.tool_args(goal.model_copy(update={"slots": {**goal.slots, slot: task["number"]}}), intent)
        spec = self.specs[intent.id]
        if spec.templates.confirm:
            plan.steps = [Confirm(prompt=spec.templates.confirm, values=task, tool=intent.tool, params=args)]
        else:
            plan.steps = [ToolCall(tool_name=intent.tool or "", params=args)]
        return plan


def _named(listed: ToolResult, words: set[str]) -> dict | None:
    """The one listed task whose title shares the most of `words`; None when none or several do."""
    scored = [(len(words & _words(str(t.get("title", "")))), t) for t in (listed.data or {}).get("items", [])]
    best = max((n for n, _ in scored), default=0)
    found = [t for n, t in scored if n == best]
    return found[0] if best and len(found) == 1 else None


@planner("tasks")
def task_planner(needs: PlannerNeeds) -> Planner:
    return TaskPlanner(needs.config)
