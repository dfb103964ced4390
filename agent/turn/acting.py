"""The act stage: an agent plans, the router alone runs the tools it requests, the agent answers.

Each pass asks the goal's agent for a plan given this turn's tool results; tool calls go through
the policy engine and the tool gateway; a plan without tool calls ends the turn.
"""

from __future__ import annotations

from agent.config.schema import Messages
from agent.context.turn import TurnContext
from agent.conversation import goals, handoff
from agent.conversation.confirmations import Confirmations, action_hash
from agent.conversation.session import Choice, Escalation, Goal, GoalStatus, PendingConfirmation
from agent.domain.contexts import AgentRequest, PolicyContext, ToolContext
from agent.domain.types import (
    Alert,
    Confirm,
    Intent,
    Option,
    OutboundMessage,
    PlanStep,
    PolicyDecision,
    ToolCall,
    ToolResult,
)
from agent.planners.base import Planner
from agent.policy.engine import PolicyEngine
from agent.templates import render
from agent.text import STOPWORDS, words
from agent.tools.gateway import ToolExecutor


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

    async def run(self, agent: Planner, ctx: TurnContext, goal: Goal, intent: Intent) -> list[ToolResult]:
        """Ask the agent for a plan, run what it requests, and pass the results back, until it answers."""
        results: list[ToolResult] = []
        approved = ctx.t.decided.approved
        try:
            await self._passes(agent, ctx, goal, intent, results)
            if results and not results[-1].success and (results[-1].data or {}).get("offer_human"):
                await self._offer_human(ctx)
            return results
        finally:
            Confirmations.settle(ctx.me, approved, ctx.out.final_text)

    async def _passes(
        self, agent: Planner, ctx: TurnContext, goal: Goal, intent: Intent, results: list[ToolResult]
    ) -> None:
        """Plan passes until a plan runs no tool, an action waits for confirmation, or passes run out."""
        prefs = ctx.preferences
        # Read only for agents that use them: most turns never need the stored preferences.
        stored = await prefs.get() if agent.reads_preferences and prefs is not None else None
        for n in range(1, self.max_passes + 1):
            request = AgentRequest(
                goal=goal,
                intent=intent,
                state=ctx.state,
                me=ctx.me,
                text=ctx.interaction.text,
                results=results,
                history=ctx.history,
                preferences=stored,
                pass_number=n,
            )
            plan = await agent.plan(request, ctx.t)
            if n == 1:
                ctx.t.emit("plan_created", {"intent_id": intent.id, "steps": [s.type for s in plan.steps]})
                ctx.t.emit("plan_type", {"type": plan.plan_type})
            if plan.slots_patch:
                goal.slots.update(plan.slots_patch)
                goal.slots = {k: v for k, v in goal.slots.items() if v is not None}
                goals.refresh(goal, intent, agent)
            ran = await self._steps(ctx, goal, intent, plan.steps, results)
            if ran is None:  # held for the user's confirmation: the turn ends with the question
                return
            if plan.offer is not None and ctx.me.pending_confirmation is None:
                offer = plan.offer
                ctx.me.pending_confirmation = PendingConfirmation(
                    kind="offer",
                    intent_id=offer.intent_id,
                    params=offer.params,
                    prompt=offer.prompt,
                    taken_by=offer.taken_by,
                )
            if plan.goal_status is not None:
                goals.settle(ctx.me, goal, intent, GoalStatus(plan.goal_status))
            if not ran:
                return
        await ctx.out.send(OutboundMessage(kind="error", text=self.messages.too_many_steps))
        goals.settle(ctx.me, goal, intent, GoalStatus.failed)

    async def _steps(
        self, ctx: TurnContext, goal: Goal, intent: Intent, steps: list[PlanStep], results: list[ToolResult]
    ) -> bool | None:
        """One plan's steps in order: whether tools ran, or None when an action waits for confirmation."""
        t, ran = ctx.t, False
        for step in steps:
            if step.type in ("tool_call", "confirm") and (call := _call_of(step)) is not None:
                asked = step if step.type == "confirm" else None
                result = await self._run_tool(ctx, goal, intent, call, asked)
                if result is None:
                    return None
                results.append(result)
                ran = True
                if not result.success:
                    break
            elif step.type == "confirm":
                text = render(step.prompt, goal.slots | step.values, self.currency)
                await ctx.out.send(OutboundMessage(kind="question", text=text))
            elif step.type == "respond" and step.when == "pre":
                t.emit("plan_communicated", {"message": step.message})
                await ctx.out.send(OutboundMessage(kind="pre", text=step.message))
            elif step.type == "ask_user":
                if step.options and goal.missing[:1] == [step.param]:
                    goal.choices = [
                        Choice(value=o.value, label=o.label, words=[w for w in words(o.label) if w not in STOPWORDS])
                        for o in step.options
                    ]
                await ctx.out.send(_question(goal, step.param, step.prompt))
            elif step.type == "respond" and step.message:
                await ctx.out.send(
                    OutboundMessage(kind="answer" if step.when == "post" else "error", text=step.message)
                )
        return ran

    async def _run_tool(
        self, ctx: TurnContext, goal: Goal, intent: Intent, call: ToolCall, asked: Confirm | None
    ) -> ToolResult | None:
        """Policy, then the gateway. None: the action waits for the user's confirmation (`asked`:
        the plan's question, when it has one)."""
        state, t = ctx.state, ctx.t
        decision = await self.policy.validate(
            call,
            PolicyContext(session=state, intent_id=intent.id, agent=goal.agent, customer=ctx.customer, reads=ctx.reads),
        )
        if decision.params is not None:
            call = call.model_copy(update={"params": decision.params})
        t.emit("policy_check", {"tool": call.tool_name, **decision.model_dump(exclude={"params"})})
        if not decision.allowed:
            return self._refuse(ctx, goal, call, decision)
        digest = None
        if (asked is not None or decision.requires_confirmation) and self.confirmations is not None:
            digest = action_hash(state.session_id, call.tool_name, call.params)
            if digest != t.decided.approved:
                prompt, values = (asked.prompt, asked.values) if asked is not None else ("", {})
                text = render(prompt or self.messages.confirm_prompt, goal.slots | values | call.params, self.currency)
                await self.confirmations.ask(ctx, goal.id, intent.id, call, text)
                return None
        tool_ctx = ToolContext(
            session_id=state.session_id,
            interaction_id=ctx.interaction.id,
            agent=goal.agent,
            intent_id=intent.id,
            customer_id=state.customer_id,
            speaker=ctx.interaction.speaker,
            action_hash=digest,
            now=ctx.now,
            reads=ctx.reads,
        )
        result = await self.executor.execute(call, tool_ctx)
        self._record(ctx, call, result, digest is not None)
        return result

    @staticmethod
    def _record(ctx: TurnContext, call: ToolCall, result: ToolResult, confirmed: bool) -> None:
        """What a tool run leaves in the turn: its telemetry, the confirmed action, a handoff, alerts."""
        t = ctx.t
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
        if confirmed:
            Confirmations.carried_out(ctx.me, call, result)
        for effect in result.effects:
            if effect.kind == "handoff":
                ctx.out.alerts.append(handoff.request(ctx.state, str(effect.data.get("reason", "")), ctx.history))
                ctx.out.effects.append(handoff.queue_row(ctx.state))
        if not result.replayed:
            ctx.out.alerts += result.alerts  # what the tool itself says admins must hear

    def _refuse(self, ctx: TurnContext, goal: Goal, call: ToolCall, decision: PolicyDecision) -> ToolResult:
        """A denial is explained to the user; an escalation hands the conversation to people. Admins hear of both."""
        state, out = ctx.state, ctx.out
        reason = "; ".join(v for v in decision.violations if v) or "not allowed"
        who = state.customer_id or "guest"
        code = "policy_escalated" if decision.requires_escalation else "policy_denied"
        if decision.requires_escalation:
            ctx.t.outcome.escalated = True  # kept for review with the turn
            summary = f"Policy {decision.rule} needs a person for customer {who}'s {call.tool_name}: {reason}"
            alert = handoff.request(state, reason, ctx.history, kind="policy_escalation", summary=summary)
            # The exact call, as the policy passed it, waits for a person to approve or deny it.
            out.alerts.append(handoff.escalate(state, alert, _escalation(ctx, goal, call, decision.rule)))
            out.effects.append(handoff.queue_row(state))
        elif decision.alert:
            out.alerts.append(
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

    async def _offer_human(self, ctx: TurnContext) -> None:
        """After a refusal that offers a person: the offer, with its button; "yes" hands off."""
        t, handed_off = ctx.t, ctx.state.handoff
        if t.decided.offered_human or (handed_off is not None and handed_off.active):
            return
        t.decided.offered_human = True
        person = handoff.handoff_intent(ctx.eligible)
        if ctx.me.pending_confirmation is None and person is not None:
            ctx.me.pending_confirmation = PendingConfirmation(
                kind="offer", intent_id=person, prompt=self.messages.human_offer
            )
        await ctx.out.send(OutboundMessage(kind="question", text=self.messages.human_offer, buttons=["human"]))


def _escalation(ctx: TurnContext, goal: Goal, call: ToolCall, rule: str) -> Escalation:
    """The held call; its id names this escalation (this message's request for this action)."""
    digest = action_hash(ctx.interaction.id, call.tool_name, call.params)
    return Escalation(
        id=f"E-{digest[:12]}",
        tool=call.tool_name,
        params=call.params,
        intent_id=goal.intent_id,
        agent=goal.agent,
        rule=rule,
        speaker=ctx.interaction.speaker,
        customer_id=ctx.state.customer_id,
    )


def _call_of(step: PlanStep) -> ToolCall | None:
    """The tool call a ToolCall or Confirm step asks for (a Confirm may carry none)."""
    if isinstance(step, ToolCall):
        return step
    if isinstance(step, Confirm) and step.tool:
        return ToolCall(tool_name=step.tool, params=step.params)
    return None


def _question(goal: Goal, param: str, prompt: str) -> OutboundMessage:
    """The goal's question; one that offers things to choose from ("Which one: ...?") carries them
    as choices (buttons), a click naming the goal and the value picked."""
    if not goal.choices or goal.missing[:1] != [param]:
        return OutboundMessage(kind="question", text=prompt)
    options = [Option(value=c.value, label=f"{c.label} ({c.value})") for c in goal.choices]
    return OutboundMessage(kind="question", text=prompt, choices=options, action_hash=goal.id)
