"""An agent that decides with an LLM: the tool-calling loop behind the Planner seam.

Each pass the model sees the agent's constitution, the goal, the fitted history, the user's
message and the results of the tools it asked for earlier in this turn, and picks one decision:

- INVOKE_TOOL: it asked for tools (only its own; the router runs them and calls `plan` again);
- REQUEST_CONFIRMATION: one of those tools needs the user's yes first;
- ASK_CLARIFICATION: it asked the user a question;
- RESPOND_ONLY: it answered; the grounding guard checks the answer against the turn's data.

Questions for missing slots, failed tools and ungrounded answers use the template planner, which
is also the fallback whenever the LLM fails after tools have run (the data is there to answer).
"""

from __future__ import annotations

import json
from typing import Any

from agent.contexts import AgentRequest
from agent.errors import ProviderError
from agent.interfaces import TurnLog
from agent.llm.calls import LLMCalls
from agent.llm.context import history_messages
from agent.llm.grounding import ungrounded
from agent.llm.models import LLMToolCall
from agent.planners.generic import TemplatePlanner
from agent.planners.render import render
from agent.types import AskUser, Confirm, Plan, Respond, ToolCall, ToolResult

TOO_COMPLEX = "That request is too complex. Could you break it into smaller steps?"
RULES = (
    "Rules: use a tool for every fact about orders, stock, prices and dates; never guess them. "
    "If something needed is unclear, ask one short question. Answer in one to three sentences, "
    "without naming tools or internal details."
)


class _Loop:
    """One turn's conversation with the model, carried from pass to pass in the turn's scratch."""

    def __init__(self, messages: list[dict[str, Any]]):
        self.messages = messages
        self.pending: list[dict[str, Any]] = []  # tool calls awaiting results
        self.template = False  # fell back to templates for the rest of the turn


class LLMAgent:
    """
    Args:
        name: the agent's name in config/agents.yaml.
        constitution: its system prompt.
        calls: the metered LLM.
        tools: the JSON schemas of the tools this agent may use (ToolGateway.schemas(name)).
        templates: the template planner, for questions and every fallback.
        max_iterations: passes per turn before the user is asked to split the request.
        confirm_tools: tools that need the user's yes before they run.
        phrase_answers: the model words the answer from tool results; False leaves it to templates.
    """

    def __init__(
        self,
        name: str,
        constitution: str,
        calls: LLMCalls,
        tools: list[dict[str, Any]],
        templates: TemplatePlanner,
        max_iterations: int = 5,
        confirm_tools: frozenset[str] = frozenset(),
        phrase_answers: bool = True,
    ):
        self.name = name
        self.constitution = constitution
        self.calls = calls
        self.tools = tools
        self.templates = templates
        self.max_iterations = max_iterations
        self.confirm_tools = confirm_tools
        self.phrase_answers = phrase_answers

    def _loops(self, turn: TurnLog | None) -> dict[str, _Loop]:
        """This turn's model conversations by goal id: kept in the turn, so the agent holds no state."""
        if turn is None:
            return {}
        loops: dict[str, _Loop] = turn.scratch.setdefault(f"llm_agent:{self.name}", {})
        return loops

    def question(self, intent_id: str, slot: str) -> str:
        return self.templates.question(intent_id, slot)

    async def plan(self, request: AgentRequest, turn: TurnLog | None = None) -> Plan:
        goal = request.goal
        if goal.missing:
            return await self.templates.plan(request, turn)
        loops = self._loops(turn)
        # A first pass starts afresh, even for an interaction retried after a version conflict.
        loop = None if request.pass_number == 1 else loops.get(goal.id)
        if loop is None:
            if request.results or await self.calls.over_budget(request.state, turn):
                return await self.templates.plan(request, turn)
            loop = await self._start(request, turn)
            loops[goal.id] = loop
        elif loop.template:
            return await self._template(request, turn)
        else:
            self._feed_results(loop, request.results)
        if any(not r.success for r in request.results) or (request.results and not self.phrase_answers):
            # The templates know each tool's failure (not found -> ask for the ID again), and
            # answer from the results when the model is not to phrase answers.
            return await self._template(request, turn)
        try:
            response = await self.calls.generate("agent", request.state, loop.messages, turn, tools=self.tools)
        except ProviderError as e:
            if request.results:
                self._decision("fallback", request, turn, error=e.kind)
                return await self._template(request, turn)
            loops.pop(goal.id, None)
            self._decision("llm_error", request, turn, error=e.kind)
            return Plan(
                intent_id=goal.intent_id, goal_id=goal.id, steps=[Respond(when="error", message=e.user_message)]
            )
        if response.tool_calls:
            return await self._invoke(request, turn, loop, response.content, response.tool_calls)
        return await self._respond(request, turn, (response.content or "").strip())

    async def _start(self, request: AgentRequest, turn: TurnLog | None) -> _Loop:
        goal, intent = request.goal, request.intent
        context = (
            f"Current request: {intent.description or intent.id} Known details: {json.dumps(goal.slots, default=str)}. "
            f"Amounts of money are in {self.templates.currency}; write them as {self.templates.currency}12.50."
        )
        system = "\n\n".join([self.constitution.strip(), RULES, context])
        tail = [{"role": "user", "content": request.text}]
        return _Loop(await history_messages(self.calls, request.state, turn, system, request.history, tail))

    async def _invoke(
        self, request: AgentRequest, turn: TurnLog | None, loop: _Loop, content: str | None, calls: list[LLMToolCall]
    ) -> Plan:
        goal, intent = request.goal, request.intent
        plan = Plan(intent_id=intent.id, goal_id=goal.id)
        if request.pass_number >= self.max_iterations:
            self._loops(turn).pop(goal.id, None)
            self._decision("too_many_iterations", request, turn)
            plan.steps = [Respond(when="error", message=TOO_COMPLEX)]
            plan.goal_status = "failed"
            return plan
        if any(c.invalid_arguments is not None for c in calls):
            # A weak model sent arguments that are not JSON: answer from the templates instead.
            loop.template = True
            self._decision("fallback", request, turn, error="invalid_tool_arguments", tools=[c.name for c in calls])
            return await self._template(request, turn)
        needs_yes = [c for c in calls if c.name in self.confirm_tools]
        if needs_yes:
            self._loops(turn).pop(goal.id, None)
            c = needs_yes[0]
            prompt = f"Just to confirm: shall I go ahead with {c.name.replace('_', ' ')} ({_args(c.arguments)})?"
            self._decision("REQUEST_CONFIRMATION", request, turn, tools=[c.name])
            plan.steps = [
                Confirm(prompt=prompt, tool=c.name, params=c.arguments),
                AskUser(param="confirmation", prompt=prompt),
            ]
            return plan
        self._decision("INVOKE_TOOL", request, turn, tools=[c.name for c in calls])
        if request.pass_number == 1:
            pre = self.templates.specs[intent.id].templates.pre if intent.id in self.templates.specs else ""
            args = {k: v for c in calls for k, v in c.arguments.items()}
            if pre:
                plan.steps.append(Respond(when="pre", message=render(pre, {**args, **goal.slots})))
        loop.pending = [
            {"id": c.id or f"call_{request.pass_number}_{i}", "name": c.name, "arguments": c.arguments}
            for i, c in enumerate(calls)
        ]
        loop.messages.append({"role": "assistant", "content": content or "", "tool_calls": loop.pending})
        plan.steps += [ToolCall(tool_name=c["name"], params=c["arguments"]) for c in loop.pending]
        return plan

    def _feed_results(self, loop: _Loop, results: list[ToolResult]) -> None:
        """Tool messages answering the calls of the previous pass, in order."""
        latest = results[-len(loop.pending) :] if loop.pending else []
        for i, call in enumerate(loop.pending):
            r = latest[i] if i < len(latest) else None
            body = (
                {"success": r.success, "data": r.data, "error": r.error}
                if r is not None
                else {"success": False, "error": "not run: an earlier tool failed"}
            )
            loop.messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(body, default=str)})
        loop.pending = []

    async def _respond(self, request: AgentRequest, turn: TurnLog | None, text: str) -> Plan:
        goal = request.goal
        plan = Plan(intent_id=goal.intent_id, goal_id=goal.id)
        if not text:
            self._decision("fallback", request, turn, error="empty_answer")
            return await self._template(request, turn)
        if text.endswith("?") and not request.results:
            self._loops(turn).pop(goal.id, None)
            self._decision("ASK_CLARIFICATION", request, turn)
            plan.steps = [AskUser(param="clarification", prompt=text)]
            return plan
        sources: list[Any] = [r.data for r in request.results if r.data] + [goal.slots]
        claims = ungrounded(text, sources)
        if claims:
            if turn is not None:
                turn.emit("grounding_violation", {"agent": self.name, "claims": claims[:10]}, level="warn")
            return await self._template(request, turn)
        self._loops(turn).pop(goal.id, None)
        self._decision("RESPOND_ONLY", request, turn)
        plan.steps = [Respond(when="post", message=text)]
        plan.goal_status = "done"
        return plan

    async def _template(self, request: AgentRequest, turn: TurnLog | None) -> Plan:
        plan = await self.templates.plan(request, turn)
        loops = self._loops(turn)
        loop = loops.get(request.goal.id)
        if plan.plan_type == "tool_call" and loop is not None:
            loop.template = True
        else:
            loops.pop(request.goal.id, None)
        return plan

    def _decision(self, decision: str, request: AgentRequest, turn: TurnLog | None, **extra: Any) -> None:
        if turn is not None:
            turn.emit("llm_decision", {"agent": self.name, "decision": decision, "pass": request.pass_number, **extra})


def _args(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in arguments.items()) or "no details"
