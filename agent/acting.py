"""The act stage: an agent plans, the router alone runs the tools it requests, the agent answers.

Each pass asks the goal's agent for a plan given this turn's tool results; tool calls go through
the policy engine and the tool gateway; a plan without tool calls ends the turn.
"""

from __future__ import annotations

from agent.config import Messages
from agent.contexts import AgentRequest, PolicyContext, ToolContext
from agent.conversation import goals, handoff
from agent.conversation.confirmations import Confirmations, action_hash
from agent.interfaces import Planner, PolicyEngine, ToolExecutor
from agent.planners.render import render
from agent.preferences import TurnPreferences
from agent.session import Goal, GoalStatus, PendingConfirmation, SessionState
from agent.turn import Turn
from agent.types import (
    Alert,
    Confirm,
    Intent,
    Message,
    OutboundMessage,
    PlanStep,
    PolicyDecision,
    ToolCall,
    ToolResult,
)


class Acting:
    """
    Args:
        policy: checks every tool call before it runs.
        executor: the tool gateway.
        max_passes: plan passes per turn before the bot gives up on the goal.
        messages: the bot's fixed messages.
        confirmations: holds actions the policy (or the agent) wants confirmed; None runs them.
        currency: the store's currency symbol, for amounts in confirmation prompts.
    """

    def __init__(
        self,
        policy: PolicyEngine,
        executor: ToolExecutor,
        max_passes: int,
        messages: Messages,
        confirmations: Confirmations | None = None,
        currency: str = "$",
    ):
        self.policy = policy
        self.executor = executor
        self.max_passes = max_passes
        self.messages = messages
        self.confirmations = confirmations
        self.currency = currency

    async def run(
        self,
        agent: Planner,
        state: SessionState,
        goal: Goal,
        intent: Intent,
        history: list[Message],
        customer: dict | None,
        t: Turn,
        preferences: TurnPreferences | None = None,
    ) -> list[ToolResult]:
        """Ask the agent for a plan, run what it requests, and pass the results back, until it answers."""
        results: list[ToolResult] = []
        approved = t.approved
        try:
            await self._passes(agent, state, goal, intent, history, customer, t, results, approved, preferences)
            if results and not results[-1].success and (results[-1].data or {}).get("offer_human"):
                await self._offer_human(state, t)
            return results
        finally:
            Confirmations.settle(state, approved, t)

    async def _passes(
        self,
        agent: Planner,
        state: SessionState,
        goal: Goal,
        intent: Intent,
        history: list[Message],
        customer: dict | None,
        t: Turn,
        results: list[ToolResult],
        approved: str | None,
        preferences: TurnPreferences | None,
    ) -> list[ToolResult]:
        # Read only for agents that use them: most turns never need the stored preferences.
        prefs = await preferences.get() if agent.reads_preferences and preferences is not None else None
        for n in range(1, self.max_passes + 1):
            plan = await agent.plan(
                AgentRequest(
                    goal=goal,
                    intent=intent,
                    state=state,
                    text=t.interaction.text,
                    results=results,
                    history=history,
                    preferences=prefs,
                    pass_number=n,
                ),
                t,
            )
            if n == 1:
                t.emit("plan_created", {"intent_id": intent.id, "steps": [s.type for s in plan.steps]})
                t.emit("plan_type", {"type": plan.plan_type})
            if plan.slots_patch:
                goal.slots.update(plan.slots_patch)
                goal.slots = {k: v for k, v in goal.slots.items() if v is not None}
                goals.refresh(goal, intent, lambda slot: agent.question(intent.id, slot))
            ran_tools = False
            for step in plan.steps:
                if step.type in ("tool_call", "confirm") and (call := _call_of(step)) is not None:
                    prompt = step.prompt if step.type == "confirm" else ""
                    result = await self._run_tool(
                        state, goal, intent, call, customer, history, t, approved, step.type == "confirm", prompt
                    )
                    if result is None:  # held for the user's confirmation: the turn ends with the question
                        return results
                    results.append(result)
                    ran_tools = True
                    if not result.success:
                        break
                elif step.type == "confirm":
                    await t.send(OutboundMessage(kind="question", text=step.prompt))
                elif step.type == "respond" and step.when == "pre":
                    t.emit("plan_communicated", {"message": step.message})
                    await t.send(OutboundMessage(kind="pre", text=step.message))
                elif step.type == "ask_user":
                    await t.send(OutboundMessage(kind="question", text=step.prompt))
                elif step.type == "respond" and step.message:
                    await t.send(OutboundMessage(kind="answer" if step.when == "post" else "error", text=step.message))
            if plan.goal_status is not None:
                goals.settle(state, goal, intent, GoalStatus(plan.goal_status))
            if not ran_tools:
                return results
        await t.send(OutboundMessage(kind="error", text=self.messages.too_many_steps))
        goals.settle(state, goal, intent, GoalStatus.failed)
        return results

    async def _run_tool(
        self,
        state: SessionState,
        goal: Goal,
        intent: Intent,
        call: ToolCall,
        customer: dict | None,
        history: list[Message],
        t: Turn,
        approved: str | None = None,
        confirm: bool = False,
        prompt: str = "",
    ) -> ToolResult | None:
        """Policy, then the gateway. None: the action waits for the user's confirmation."""
        decision = await self.policy.validate(
            call, PolicyContext(session=state, intent_id=intent.id, agent=goal.agent, customer=customer)
        )
        if decision.params is not None:
            call = call.model_copy(update={"params": decision.params})
        t.emit("policy_check", {"tool": call.tool_name, **decision.model_dump(exclude={"params"})})
        if not decision.allowed:
            return self._refuse(state, goal, call, decision, history, t)
        digest = None
        if (confirm or decision.requires_confirmation) and self.confirmations is not None:
            digest = action_hash(state.session_id, call.tool_name, call.params)
            if digest != approved:
                text = render(prompt or self.messages.confirm_prompt, {**goal.slots, **call.params}, self.currency)
                await self.confirmations.ask(state, goal.id, intent.id, call, text, t)
                return None
        result = await self.executor.execute(
            call,
            ToolContext(
                session_id=state.session_id,
                interaction_id=t.interaction.id,
                agent=goal.agent,
                intent_id=intent.id,
                customer_id=state.customer_id,
                speaker=state.speaker,
                action_hash=digest,
            ),
        )
        t.emit(
            "tool_execute",
            {
                "tool": call.tool_name,
                "ok": result.success,
                "error_code": result.error_code,
                "replayed": result.replayed,
                "time_ms": round(result.execution_time_ms, 3),
            },
            level="info" if result.success else "warn",
        )
        if digest is not None:
            Confirmations.carried_out(state, call, result)
        for effect in result.effects:
            if effect.kind == "handoff":
                t.alerts.append(handoff.request(state, str(effect.data.get("reason", "")), history))
                t.effects.append(handoff.queue_row(state))
        if not result.replayed:
            t.alerts += result.alerts  # what the tool itself says admins must hear
        return result

    def _refuse(
        self,
        state: SessionState,
        goal: Goal,
        call: ToolCall,
        decision: PolicyDecision,
        history: list[Message],
        t: Turn,
    ) -> ToolResult:
        """A denial is explained to the user; an escalation hands the conversation to people. Admins hear of both."""
        reason = "; ".join(v for v in decision.violations if v) or "not allowed"
        who = state.customer_id or "guest"
        code = "policy_escalated" if decision.requires_escalation else "policy_denied"
        if decision.requires_escalation:
            summary = f"Policy {decision.rule} needs a person for customer {who}'s {call.tool_name}: {reason}"
            t.alerts.append(handoff.request(state, reason, history, kind="policy_escalation", summary=summary))
            t.effects.append(handoff.queue_row(state))
        elif decision.alert:
            t.alerts.append(
                Alert(
                    kind="policy_denied",
                    session_id=state.session_id,
                    summary=f"Policy {decision.rule} refused {call.tool_name} for customer {who}: {reason}",
                    details={
                        "rule": decision.rule,
                        "tool": call.tool_name,
                        "agent": goal.agent,
                        "facts": decision.facts,
                    },
                    dedupe_key=f"policy_denied:{state.session_id}:{decision.rule}",
                )
            )
        data = {"reason": reason, "offer_human": decision.offer_human}
        return ToolResult(tool=call.tool_name, success=False, error=reason, error_code=code, data=data)

    async def _offer_human(self, state: SessionState, t: Turn) -> None:
        """After a refusal that offers a person: the offer, with its button; "yes" hands off."""
        if t.scratch.get("offered_human") or (state.handoff is not None and state.handoff.active):
            return
        t.scratch["offered_human"] = True
        if state.pending_confirmation is None:
            state.pending_confirmation = PendingConfirmation(
                kind="offer", intent_id="human_handoff", prompt=self.messages.human_offer
            )
        await t.send(OutboundMessage(kind="question", text=self.messages.human_offer, buttons=["human"]))


def _call_of(step: PlanStep) -> ToolCall | None:
    """The tool call a ToolCall or Confirm step asks for (a Confirm may carry none)."""
    if isinstance(step, ToolCall):
        return step
    if isinstance(step, Confirm) and step.tool:
        return ToolCall(tool_name=step.tool, params=step.params)
    return None
