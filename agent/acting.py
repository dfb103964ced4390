"""The act stage: an agent plans, the router alone runs the tools it requests, the agent answers.

Each pass asks the goal's agent for a plan given this turn's tool results; tool calls go through
the policy engine and the tool gateway; a plan without tool calls ends the turn.
"""

from __future__ import annotations

from agent import goals, handoff
from agent.config import Messages
from agent.interfaces import AgentRequest, Planner, PolicyContext, PolicyEngine, ToolContext, ToolExecutor
from agent.release.risk import risk_alert
from agent.turn import Turn
from agent.types import Goal, GoalStatus, Intent, Message, OutboundMessage, SessionState, ToolCall, ToolResult


class Acting:
    """
    Args:
        policy: checks every tool call before it runs.
        executor: the tool gateway.
        max_passes: plan passes per turn before the bot gives up on the goal.
        messages: the bot's fixed messages.
    """

    def __init__(self, policy: PolicyEngine, executor: ToolExecutor, max_passes: int, messages: Messages):
        self.policy = policy
        self.executor = executor
        self.max_passes = max_passes
        self.messages = messages

    async def run(
        self,
        agent: Planner,
        state: SessionState,
        goal: Goal,
        intent: Intent,
        history: list[Message],
        customer: dict | None,
        t: Turn,
    ) -> list[ToolResult]:
        """Ask the agent for a plan, run what it requests, and pass the results back, until it answers."""
        results: list[ToolResult] = []
        for n in range(1, self.max_passes + 1):
            plan = await agent.plan(
                AgentRequest(
                    goal=goal,
                    intent=intent,
                    state=state,
                    results=results,
                    history=history,
                    pass_number=n,
                )
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
                if step.type == "tool_call":
                    result = await self._run_tool(state, goal, intent, step, customer, history, t)
                    results.append(result)
                    ran_tools = True
                    if not result.success:
                        break
                elif step.type == "respond" and step.when == "pre":
                    t.emit("plan_communicated", {"message": step.message})
                    await t.send(OutboundMessage(kind="pre", text=step.message))
                elif step.type == "ask_user":
                    await t.send(OutboundMessage(kind="question", text=step.prompt))
                elif step.type == "respond" and step.message:
                    await t.send(OutboundMessage(kind="answer" if step.when == "post" else "error", text=step.message))
            if plan.goal_status is not None:
                self._finish(state, goal, GoalStatus(plan.goal_status))
            if not ran_tools:
                return results
        await t.send(OutboundMessage(kind="error", text=self.messages.too_many_steps))
        self._finish(state, goal, GoalStatus.failed)
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
    ) -> ToolResult:
        decision = await self.policy.validate(
            call, PolicyContext(session=state, intent_id=intent.id, agent=goal.agent, customer=customer)
        )
        t.emit("policy_check", {"tool": call.tool_name, **decision.model_dump()})
        if not decision.allowed:
            reason = "; ".join(decision.violations) or "not allowed"
            return ToolResult(tool=call.tool_name, success=False, error=reason, error_code="policy_denied")
        result = await self.executor.execute(
            call,
            ToolContext(
                session_id=state.session_id,
                interaction_id=t.interaction.id,
                agent=goal.agent,
                intent_id=intent.id,
                customer_id=state.customer_id,
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
        for effect in result.effects:
            if effect.kind == "handoff":
                t.alerts.append(handoff.request(state, str(effect.data.get("reason", "")), history))
            elif effect.kind == "risk_report" and effect.data.get("severity") == "high":
                t.alerts.append(risk_alert(state.session_id, effect.data))
        return result

    @staticmethod
    def _finish(state: SessionState, goal: Goal, status: GoalStatus) -> None:
        if state.active_goal_id == goal.id:
            goals.finish(state, goal, status)
