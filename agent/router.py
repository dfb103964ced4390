"""AgentRouter: one turn as a short pipeline of stages, each emitting one telemetry event.

received -> history_loaded -> intents_eligible -> intent_classified -> goal_updated ->
plan_created -> plan_type -> plan_communicated -> policy_check -> tool_execute ->
response_generated -> memory_updated. Stages that do not apply are skipped, never reordered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from agent import goals
from agent.acting import Acting
from agent.config import Messages, Settings
from agent.errors import InputError, StorageError, VersionConflict
from agent.intents import IntentsRegistry
from agent.interfaces import (
    Classifier,
    DataSource,
    Planner,
    PolicyEngine,
    Reply,
    SessionStore,
    TelemetrySink,
    ToolExecutor,
)
from agent.locks import SessionLocks
from agent.turn import Turn
from agent.types import (
    AgentResponse,
    Classification,
    Goal,
    IntentContext,
    Interaction,
    Message,
    OutboundMessage,
    PendingConfirmation,
    SessionState,
    ToolResult,
    TurnRecord,
)
from agent.understanding.text import clean


@dataclass
class RouterParts:
    """The collaborators of a router; `agent.build_router` (the composition root) fills it."""

    registry: IntentsRegistry
    classifier: Classifier
    planner: Planner  # the default agent; `planners` overrides it per agent name
    policy: PolicyEngine
    executor: ToolExecutor
    store: SessionStore
    data: DataSource
    messages: Messages
    settings: Settings = field(default_factory=Settings)
    telemetry: TelemetrySink | None = None
    planners: dict[str, Planner] = field(default_factory=dict)
    # Resources to release with the router (e.g. an LLM provider's HTTP client).
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)


class AgentRouter:
    def __init__(self, parts: RouterParts):
        self.p = parts
        self.locks = SessionLocks()
        self.acting = Acting(parts.policy, parts.executor, parts.settings.max_agent_passes, parts.messages)

    async def aclose(self) -> None:
        for close in self.p.closers:
            await close()
        await self.p.store.aclose()

    async def __aenter__(self) -> AgentRouter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def handle(self, interaction: Interaction, reply: Reply | None = None) -> AgentResponse:
        """Run one turn. Messages go to `reply` as soon as they exist; the response sums them up."""
        interaction = interaction.model_copy(update={"text": clean(interaction.text)})
        try:
            self._check_input(interaction.text)
        except InputError as e:
            return await self._refuse(interaction, e.user_message, reply)
        delivered: list[OutboundMessage] = []
        async with self.locks.hold(interaction.session_key):
            for attempt in range(self.p.settings.commit_retries):
                try:
                    return await self._turn(
                        interaction,
                        Turn(
                            interaction,
                            interaction.session_key,
                            self.p.telemetry,
                            self.p.registry.redacted_params,
                            reply,
                            delivered,
                        ),
                    )
                except VersionConflict:
                    if attempt + 1 == self.p.settings.commit_retries:
                        return await self._refuse(interaction, self.p.messages.busy, reply)
                except StorageError:
                    return await self._refuse(interaction, self.p.messages.busy, reply)
        raise AssertionError("unreachable")

    def _check_input(self, text: str) -> None:
        m, limit = self.p.messages, self.p.settings.max_message_chars
        if not text:
            raise InputError(m.empty)
        if len(text) > limit:
            raise InputError(m.too_long.format(length=len(text), limit=limit))

    async def _refuse(self, interaction: Interaction, text: str, reply: Reply | None) -> AgentResponse:
        """Answer without touching the session: nothing is stored for a message we cannot handle."""
        message = OutboundMessage(kind="error", text=text)
        if reply is not None:
            await reply(message)
        return AgentResponse(
            text=text, session_id=interaction.session_key, interaction_id=interaction.id, messages=[message]
        )

    async def _turn(self, interaction: Interaction, t: Turn) -> AgentResponse:
        p = self.p
        saved, history = await p.store.load(interaction.session_key, p.settings.history_limit)
        state = saved or SessionState(
            session_id=interaction.session_key,
            workspace_id=interaction.context.workspace,
            customer_id=interaction.customer_id,
            channel_type=interaction.context.channel_type,
        )
        expected_version = state.version
        active = state.active_goal
        t.emit(
            "received",
            {
                "memory": {
                    "history_count": len(history),
                    "params_keys": sorted(active.slots) if active else [],
                    "waiting_for_param": active.missing[0] if active and active.missing else None,
                }
            },
        )
        t.emit("history_loaded", {"count": len(history)})

        results: list[ToolResult] = []
        if state.handoff is not None and state.handoff.status != "released":
            await self._during_handoff(state, t)
            cls = None
        else:
            customer = await p.data.get_customer(state.customer_id) if state.customer_id else None
            eligible = p.registry.get_eligible(
                IntentContext(
                    channel=interaction.context.channel_type.value,
                    customer_id=state.customer_id,
                    customer_tier=(customer or {}).get("tier"),
                    session_id=state.session_id,
                )
            )
            t.emit("intents_eligible", {"eligible": [i.id for i in eligible]})
            cls = await p.classifier.classify(interaction, eligible, state, history)
            results = await self._understood(state, cls, {i.id for i in eligible}, customer, history, t)

        user = Message(role="user", text=interaction.text, metadata={"interaction_id": interaction.id})
        new_messages = [user, *t.agent_messages()]
        t.emit("memory_updated", {"appended": len(new_messages), "history_count": len(history) + len(new_messages)})
        state.version = expected_version + 1
        state.updated_at = user.timestamp
        await p.store.commit(
            TurnRecord(
                state=state,
                expected_version=expected_version,
                messages=new_messages,
                events=t.events,
                effects=[e for r in results for e in r.effects],
                ledger={r.idempotency_key: r for r in results if r.idempotency_key and not r.replayed},
            )
        )
        goal = state.active_goal
        asking = next((m for m in reversed(t.outbound) if m.kind in ("question", "fallback")), None)
        return AgentResponse(
            text=t.final_text,
            session_id=state.session_id,
            interaction_id=interaction.id,
            intent_id=cls.intent_id if cls else None,
            tool_results=results,
            needs_user_input=asking is not None or state.pending_confirmation is not None,
            missing_param=goal.missing[0] if goal and goal.missing else None,
            active_goal=goal.type if goal else None,
            goal_stack=goals.stack_types(state),
            handoff=state.handoff is not None and state.handoff.status != "released",
            messages=t.outbound,
        )

    async def _during_handoff(self, state: SessionState, t: Turn) -> None:
        """A human has the conversation: the bot only acknowledges, once, until released."""
        if state.handoff and state.handoff.status == "requested" and not state.facts.get("handoff_acknowledged"):
            state.facts["handoff_acknowledged"] = True
            await t.send(
                OutboundMessage(kind="notice", text="A human support agent has been asked to join; they'll reply here.")
            )
        t.emit("response_generated", {"handoff": True, "silent": not t.outbound})

    async def _understood(
        self,
        state: SessionState,
        cls: Classification,
        eligible: set[str],
        customer: dict | None,
        history: list[Message],
        t: Turn,
    ) -> list[ToolResult]:
        p = self.p
        pending, state.pending_confirmation = state.pending_confirmation, None
        intent = p.registry.get(cls.intent_id) if cls.intent_id else None
        if intent is None:
            t.emit(
                "intent_classified",
                {"intent_id": None, "unknown_intent": True, "confidence": cls.confidence, "reply": cls.reply},
            )
            if cls.reply == "no" and pending is not None:
                await t.send(OutboundMessage(kind="answer", text=p.messages.declined_offer))
                t.emit("response_generated", {"declined": pending.kind})
                return []
            await self._fallback(state, eligible, t)
            return []
        t.emit(
            "intent_classified",
            {
                "intent_id": intent.id,
                "confidence": round(cls.confidence, 3),
                "params": cls.params,
                "redacted_params": sorted(set(cls.params) & p.registry.redacted_params),
                "fills_slot": cls.fills_slot,
                "reply": cls.reply,
            },
        )
        agent = p.planners.get(intent.agent, p.planner)
        update = goals.apply(state, cls, intent, lambda slot: agent.question(intent.id, slot))
        t.emit("goal_updated", update.model_dump() | {"goal_stack": goals.stack_types(state)})
        goal = state.goals[update.goal_id]
        results = await self.acting.run(agent, state, goal, intent, history, customer, t)
        resumed = state.active_goal if update.goal_id != state.active_goal_id else None
        if resumed is not None and state.handoff is None:
            await self._announce_resume(resumed, t)
        active = state.active_goal
        t.emit("response_generated", {"length": len(t.final_text), "needs_input": bool(active and active.missing)})
        return results

    async def _announce_resume(self, goal: Goal, t: Turn) -> None:
        text = self.p.messages.resume.format(goal=goal.intent_id.replace("_", " "))
        if goal.next_question:
            text = f"{text} {goal.next_question}"
        await t.send(OutboundMessage(kind="question" if goal.missing else "notice", text=text))

    async def _fallback(self, state: SessionState, eligible: set[str], t: Turn) -> None:
        m = self.p.messages
        goal = state.active_goal
        text = m.fallback
        if goal and goal.next_question:
            text = f"{text} {goal.next_question}"
        buttons: list = []
        if "human_handoff" in eligible:
            state.pending_confirmation = PendingConfirmation(
                kind="offer", intent_id="human_handoff", prompt=m.human_offer
            )
            buttons = ["human"]
        text = f"{text} {m.human_offer}"
        await t.send(OutboundMessage(kind="fallback", text=text, buttons=buttons))
        t.emit("response_generated", {"message": text, "fallback": True, "unknown_intent": True})
