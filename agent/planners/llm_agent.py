"""An agent that decides with an LLM: the tool-calling loop behind the Planner seam.

Each pass the model sees the agent's constitution, the goal, the fitted history, the user's
message and the results of the tools it asked for earlier in this turn, and picks one decision:

- INVOKE_TOOL: it asked for tools (only its own; the router runs them and calls `plan` again);
- REQUEST_CONFIRMATION: it asked for a tool that needs the user's yes;
- ASK_CLARIFICATION: it asked the user a question;
- RESPOND_ONLY: it answered; the grounding guard checks the answer against the turn's data.

The model chooses tools and words answers; the product keeps everything else. The agent's own
rules planner (`rules`) is consulted on the same request as a reference: it asks for missing
slots, builds confirmations (after its lookups, in product words), settles the goal's lifetime
and the slots it remembers, and answers whenever the model fails, is unavailable, asks for a tool
outside the agent's permissions, or says something the tool results do not support.
"""

from __future__ import annotations

import json
from typing import Any

from agent.config.schema import Messages
from agent.context.log import TurnLog
from agent.domain.contexts import AgentRequest
from agent.domain.types import AskUser, Plan, Respond, ToolCall, ToolResult
from agent.errors import ProviderError
from agent.llm.calls import LLMCalls
from agent.llm.context import history_messages, trim
from agent.llm.grounding import ungrounded
from agent.llm.models import AgentLoop, LLMRequest, LLMToolCall
from agent.planners.base import Planner
from agent.templates import filled

RULES = (
    "Rules: use a tool for every fact about orders, stock, prices and dates; never guess them. "
    "If something needed is unclear, ask one short question. Answer in one to three sentences, "
    "without naming tools or internal details. Cite an article by its title and section "
    "('Source: <title>: <heading>'), never by its file name."
)


class LLMAgent:
    """
    Args:
        name: the agent's name in config/agents.yaml.
        constitution: its system prompt.
        calls: the metered LLM.
        tools: the JSON schemas of the tools this agent may use (ToolGateway.schemas(name)).
        rules: the agent's own rules planner: questions, confirmations, goal lifetime, fallbacks.
        max_iterations: passes per turn before the user is asked to split the request.
        confirm_tools: tools whose use the rules planner confirms with the user first.
        phrase_answers: the model words the answer from tool results; False leaves it to the rules.
        currency: the store's currency sign, for the model to write amounts in.
    """

    reads_preferences = True  # the model sees whatever the customer told other conversations

    def __init__(
        self,
        name: str,
        constitution: str,
        calls: LLMCalls,
        tools: list[dict[str, Any]],
        rules: Planner,
        max_iterations: int = 5,
        confirm_tools: frozenset[str] = frozenset(),
        phrase_answers: bool = True,
        currency: str = "$",
        too_complex: str = Messages.model_fields["too_complex"].default,
    ):
        self.currency = currency
        self.too_complex = too_complex  # what the customer is told when the passes run out (`Messages`)
        self.name = name
        self.constitution = constitution
        self.calls = calls
        self.tools = tools
        self.allowed = frozenset(t["name"] for t in tools)
        self.rules = rules
        self.max_iterations = max_iterations
        self.confirm_tools = confirm_tools
        self.phrase_answers = phrase_answers

    def _loops(self, turn: TurnLog | None) -> dict[str, AgentLoop]:
        """This turn's model conversations by goal id: kept in the turn, so the agent holds no state."""
        if turn is None:
            return {}
        return turn.decided.agent_loops.setdefault(self.name, {})

    def question(self, intent_id: str, slot: str) -> str:
        return self.rules.question(intent_id, slot)

    async def plan(self, request: AgentRequest, turn: TurnLog | None = None) -> Plan:
        goal = request.goal
        reference = await self.rules.plan(request, turn)
        if goal.missing or request.intent.kind == "chat" or reference.plan_type in ("ask_user", "confirm"):
            # Questions, small talk and confirmations are the product's words, in every mode.
            return self._by_rules(reference, turn, goal.id)
        loops = self._loops(turn)
        # A first pass starts afresh, even for an interaction retried after a version conflict.
        loop = None if request.pass_number == 1 else loops.get(goal.id)
        if loop is None:
            if request.results or not self.calls.available(turn) or await self.calls.over_budget(request.state, turn):
                return self._by_rules(reference, turn, goal.id)
            loop = await self._start(request, turn)
            loops[goal.id] = loop
        elif loop.rules:
            return reference
        else:
            self._feed_results(loop, request.results)
        if any(not r.success for r in request.results) or (request.results and not self.phrase_answers):
            # The rules know each tool's failure (not found -> ask for the ID again), and answer
            # from the results when the model is not to phrase answers.
            return self._fallback(request, turn, reference, None)
        if (dropped := trim(self.calls, loop.messages, self.tools)) and turn is not None:
            turn.emit("history_fitted", {"dropped": dropped, "reason": "tool results"})
        try:
            asked = LLMRequest(loop.messages, tools=self.tools)
            response = await self.calls.generate("agent", request.state, asked, turn)
        except ProviderError as e:
            return self._fallback(request, turn, reference, e.kind)
        if response.tool_calls:
            return self._invoke(request, turn, loop, reference, response.content, response.tool_calls)
        return self._respond(request, turn, reference, (response.content or "").strip())

    async def _start(self, request: AgentRequest, turn: TurnLog | None) -> AgentLoop:
        goal, intent = request.goal, request.intent
        # The details, with the tool arguments the intent declares from them ("query" from the
        # policy question): the model fills its call from what it was told, not from a guess at
        # which detail a parameter of another name stands for.
        known = goal.slots | filled(intent.tool_args, goal.slots, self.currency)
        context = (
            f"Current request: {intent.description or intent.id} Known details: {json.dumps(known, default=str)}. "
            f"Amounts of money are in {self.currency}; write them as {self.currency}12.50."
        )
        system = "\n\n".join([self.constitution.strip(), RULES, context])
        tail = [{"role": "user", "content": request.text}]
        return AgentLoop(
            await history_messages(self.calls, request.state, turn, system, request.history, tail, tools=self.tools)
        )

    def _invoke(
        self,
        request: AgentRequest,
        turn: TurnLog | None,
        loop: AgentLoop,
        reference: Plan,
        content: str | None,
        calls: list[LLMToolCall],
    ) -> Plan:
        goal, intent = request.goal, request.intent
        names = [c.name for c in calls]
        if request.pass_number >= self.max_iterations:
            self._loops(turn).pop(goal.id, None)
            self._decision("too_many_iterations", request, turn)
            return Plan(
                intent_id=intent.id,
                goal_id=goal.id,
                steps=[Respond(when="error", message=self.too_complex)],
                goal_status="failed",
            )
        if any(n not in self.allowed for n in names):
            return self._fallback(request, turn, reference, "tool_not_permitted", tools=names)
        if any(c.invalid_arguments is not None for c in calls):
            return self._fallback(request, turn, reference, "invalid_tool_arguments", tools=names)
        done = {(m["name"], json.dumps(m["arguments"], sort_keys=True)) for m in loop.called}
        if any((c.name, json.dumps(c.arguments, sort_keys=True)) in done for c in calls):
            # Asking again for what it already has: the model is looping; the rules answer from the results.
            return self._fallback(request, turn, reference, "repeated_tool_call", tools=names)
        if any(n in self.confirm_tools for n in names):
            # The product asks: the rules planner looks the target up, runs the policy check's
            # inputs and words the exact action ("Delete task 3, 'call the bank'?").
            self._decision("REQUEST_CONFIRMATION", request, turn, tools=names)
            return self._by_rules(reference, turn, goal.id)
        self._decision("INVOKE_TOOL", request, turn, tools=names)
        plan = Plan(intent_id=intent.id, goal_id=goal.id)
        if request.pass_number == 1:
            plan.steps += [s for s in reference.steps if isinstance(s, Respond) and s.when == "pre"]
        loop.pending = [
            {"id": c.id or f"call_{request.pass_number}_{i}", "name": c.name, "arguments": c.arguments}
            for i, c in enumerate(calls)
        ]
        loop.messages.append({"role": "assistant", "content": content or "", "tool_calls": loop.pending})
        loop.called += loop.pending
        plan.steps += [ToolCall(tool_name=c["name"], params=c["arguments"]) for c in loop.pending]
        return plan

    def _feed_results(self, loop: AgentLoop, results: list[ToolResult]) -> None:
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

    def _respond(self, request: AgentRequest, turn: TurnLog | None, reference: Plan, text: str) -> Plan:
        goal = request.goal
        if not text:
            return self._fallback(request, turn, reference, "empty_answer")
        if text.endswith("?") and not request.results:
            self._loops(turn).pop(goal.id, None)
            self._decision("ASK_CLARIFICATION", request, turn)
            return Plan(intent_id=goal.intent_id, goal_id=goal.id, steps=[AskUser(param="clarification", prompt=text)])
        if reference.plan_type == "tool_call":
            # The model answered without the data the answer needs: the rules fetch it.
            return self._fallback(request, turn, reference, "answered_without_tools")
        sources: list[Any] = [r.data for r in request.results if r.data] + [goal.slots]
        claims = ungrounded(text, sources)
        if claims:
            if turn is not None:
                turn.emit("grounding_violation", {"agent": self.name, "claims": claims[:10]}, level="warn")
            return self._fallback(request, turn, reference, "ungrounded")
        self._loops(turn).pop(goal.id, None)
        self._decision("RESPOND_ONLY", request, turn)
        # The model's words; the goal's lifetime and remembered slots are the product's.
        steps = [s for s in reference.steps if not (isinstance(s, Respond) and s.when == "post")]
        steps.append(Respond(when="post", message=text))
        status = reference.goal_status if reference.steps else "done"
        return reference.model_copy(update={"steps": steps, "goal_status": status})

    def _fallback(
        self, request: AgentRequest, turn: TurnLog | None, reference: Plan, error: str | None, **extra: Any
    ) -> Plan:
        if error is not None:
            self._decision("fallback", request, turn, error=error, to="rules", **extra)
        return self._by_rules(reference, turn, request.goal.id)

    def _by_rules(self, plan: Plan, turn: TurnLog | None, goal_id: str) -> Plan:
        """The rules planner's plan; if it runs tools, it also answers from their results."""
        loops = self._loops(turn)
        if plan.plan_type == "tool_call":
            loop = loops.setdefault(goal_id, AgentLoop([]))
            loop.rules = True
        else:
            loops.pop(goal_id, None)
        return plan

    def _decision(self, decision: str, request: AgentRequest, turn: TurnLog | None, **extra: Any) -> None:
        if turn is not None:
            turn.emit("llm_decision", {"agent": self.name, "decision": decision, "pass": request.pass_number, **extra})
