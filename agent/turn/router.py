"""AgentRouter: one turn as a declared list of small steps (`AgentRouter.steps`), each emitting
its telemetry events.

received -> history_loaded -> intents_eligible -> intent_classified -> goal_updated ->
plan_created -> plan_type -> plan_communicated -> policy_check -> tool_execute ->
response_generated -> memory_updated. Stages that do not apply are skipped, never reordered.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from agent.config.intents import IntentsRegistry
from agent.config.schema import Messages, Settings
from agent.context.log import Turn
from agent.context.outcome import Classified
from agent.context.output import AlertNotifier, Reply, TurnOutput
from agent.context.reads import TurnReads
from agent.context.telemetry import TelemetrySink, TurnMetrics
from agent.context.tracing import Tracer, observed_turn
from agent.context.turn import TurnContext
from agent.conversation import followups, goals, handoff, moves, notices, own_orders, requests
from agent.conversation.answers import Answers
from agent.conversation.clarify import Clarifier
from agent.conversation.confirmations import Confirmations
from agent.conversation.control import Control
from agent.conversation.preferences import PreferenceRecorder
from agent.conversation.remembered import Remembered
from agent.conversation.session import Goal, SessionState
from agent.domain.records import TurnRecord
from agent.domain.types import (
    AgentResponse,
    Alert,
    Classification,
    Clock,
    Intent,
    Interaction,
    Message,
    OutboundMessage,
    ToolResult,
    utcnow,
)
from agent.errors import AlreadyCommitted, InputError, StorageError, TurnDeadline, VersionConflict
from agent.planners.base import Planner
from agent.policy.engine import PolicyEngine
from agent.redaction import Redactor
from agent.review.records import misses
from agent.sources import DataSource
from agent.storage import HandoffQueue, SessionStore
from agent.text import check_input, clean
from agent.tools.gateway import ToolExecutor
from agent.turn.acting import Acting
from agent.turn.attempts import deadline, settle_conflict
from agent.turn.desk import HandoffDesk
from agent.turn.gate import TurnGate
from agent.turn.locks import SessionLocks
from agent.turn.understanding import Understanding

log = logging.getLogger("agentbot.router")


@dataclass
class Work:
    """What a turn's steps hand on to each other under its deadline, and what the turn ends with."""

    ctx: TurnContext
    move: moves.Move | None = None  # what the message does, once `_interpreted` has read it
    results: list[ToolResult] = field(default_factory=list)
    cls: Classification | None = None  # the move's reading, once acted on
    pref_update: Any = None  # the customer's preferences to store once the turn has committed


Step = Callable[[Work], Awaitable[bool]]


@dataclass
class RouterParts:
    """The collaborators of a router; `bots.build_app` (the composition root) fills it."""

    registry: IntentsRegistry
    understanding: Understanding  # the classifier, the embedded reading and the agents' planners
    policy: PolicyEngine
    executor: ToolExecutor
    store: SessionStore
    data: DataSource
    messages: Messages
    confirmations: Confirmations
    settings: Settings = field(default_factory=Settings)
    telemetry: TelemetrySink | None = None
    alerts: AlertNotifier | None = None
    preferences: PreferenceRecorder | None = None  # cross-session customer preferences
    handoffs: HandoffQueue | None = None  # unclaimed handoffs, for `realert_unclaimed`
    tracer: Tracer | None = None  # a trace per conversation, a span per turn (OpenTelemetry); None = off
    currency: str = "$"  # the store's (config/store.yaml), for amounts the bot words itself
    # Masks what the turn writes (telemetry, replies); the composition root adds the process's secrets.
    redactor: Redactor | None = None
    metrics: TurnMetrics | None = None  # turns counted and timed for operators
    clock: Clock = utcnow  # the time a turn runs at (a replayed eval runs at its recording's)


class AgentRouter:
    def __init__(self, parts: RouterParts):
        self._p = parts
        self.redactor = parts.redactor or Redactor(parts.registry.redacted_params)
        self.locks = SessionLocks()
        s = parts.settings
        self.confirmations = parts.confirmations
        self.acting = Acting(
            parts.policy, parts.executor, s.max_agent_passes, parts.messages, self.confirmations, parts.currency
        )
        self.desk = HandoffDesk(
            parts.store,
            self.locks,
            s,
            parts.messages,
            parts.alerts,
            parts.handoffs,
            parts.telemetry,
            self.redactor,
            parts.policy,
            parts.executor,
            parts.data,
        )
        self.names = notices.GoalNames(parts.registry.specs, parts.messages)
        self.ctl = Control(parts.registry.vocabulary, parts.messages, self.names)
        self.requests = requests.Requests(parts.registry, parts.messages, self.names)
        self.understanding = parts.understanding
        self.values = parts.understanding.rules.slots  # the embedded reading's slot patterns, compiled once
        self.answers = Answers(parts.registry.specs, self.values)
        self.remembered = Remembered(parts.registry.slots, parts.registry.vocabulary)
        self.gate = TurnGate()  # turns run through it; reloaded understanding is swapped in between them
        aliases = {a: v for spec in parts.registry.slots.values() for a, v in spec.aliases.items()}
        self.own = own_orders.OwnOrders(
            own_orders.OrderNames(parts.understanding.reader.names, aliases, parts.registry.vocabulary.choosing),
            parts.registry.slots,
            parts.registry.specs,
            parts.data,
            parts.messages,
        )
        self.clarifier = Clarifier(
            parts.registry.specs, parts.messages, parts.registry.vocabulary.choosing, parts.understanding.rules
        )
        # What happens to a message, in order (bolt's middleware list): each step reads and completes
        # the turn's `Work` and says whether the turn ends with it; the first that does ends it.
        self.steps: tuple[Step, ...] = (
            self._handed_off,  # a person has the conversation: acknowledged, nothing else
            self._interpreted,  # read -> the choice question settled -> a reply move -> understood -> a move
            self._waiting,  # "wait" while an action waits for a yes
            self._unsure,  # neither yes nor no to the open question
            self._controlled,  # cancel, bye, thanks, start over
            self._act,  # each request of the move: confirmed, clarified, offered or acted on
        )

    async def aclose(self) -> None:
        await self._p.store.aclose()
        if self._p.preferences is not None:
            await self._p.preferences.aclose()
        if self._p.tracer is not None:
            await self._p.tracer.aclose()

    async def __aenter__(self) -> AgentRouter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def handle(self, interaction: Interaction, reply: Reply | None = None) -> AgentResponse:
        """Run one turn. Messages go to `reply` as soon as they exist; the response sums them up."""
        metrics = self._p.metrics
        started, outcome = time.perf_counter(), "failed"
        try:
            async with self.gate.turn():
                response, outcome = await self._handle(interaction, reply)
            return response
        finally:
            if metrics is not None:
                metrics.turn_ended(interaction.context.channel_type.value, outcome, time.perf_counter() - started)

    async def _handle(self, interaction: Interaction, reply: Reply | None) -> tuple[AgentResponse, str]:
        """The turn, and its outcome for the metrics: answered, refused or duplicate."""
        interaction = interaction.model_copy(update={"text": clean(interaction.text)})
        try:
            check_input(interaction.text, self._p.messages, self._p.settings.max_message_chars)
        except InputError as e:
            if not interaction.text:
                return await self._refuse(interaction, e.user_message, reply), "refused"
            # Nothing of an overlong message is stored with the conversation; its length and a masked
            # head are logged, and the metrics count it apart, so it leaves a trace.
            head = self.redactor.text(interaction.text[:80])
            log.warning(
                "agentbot: a message of %d characters (the limit is %d) refused, in %s: %r...",
                len(interaction.text),
                self._p.settings.max_message_chars,
                interaction.session_key,
                head,
            )
            return await self._refuse(interaction, e.user_message, reply), "too_long"
        delivered: list[OutboundMessage] = []
        async with self.locks.hold(interaction.session_key):
            with observed_turn(self._p.tracer, interaction) as trace:
                for attempt in range(self._p.settings.commit_retries):
                    t = Turn(interaction, interaction.session_key, self._p.telemetry, self.redactor, trace)
                    out = TurnOutput(interaction.id, self.redactor, reply, delivered)
                    try:
                        response = await self._turn(interaction, t, out)
                    except TurnDeadline:
                        return await self._refuse(interaction, self._p.messages.too_slow, reply), "refused"
                    except AlreadyCommitted:  # another worker answered this event; nothing of this one was shown
                        key = interaction.session_key
                        return AgentResponse(text="", session_id=key, interaction_id=interaction.id), "duplicate"
                    except VersionConflict:
                        if self._p.metrics is not None:
                            self._p.metrics.commit_conflict()
                        await settle_conflict(attempt, self._p.settings.commit_retries, interaction.from_inbox)
                        if attempt + 1 == self._p.settings.commit_retries:
                            return await self._refuse(interaction, self._p.messages.busy, reply), "refused"
                    except StorageError:
                        if interaction.from_inbox:
                            raise  # the event stays in the inbox; the channel retries it later
                        return await self._refuse(interaction, self._p.messages.busy, reply), "refused"
                    else:
                        await out.flush()
                        return response, "answered"
        raise AssertionError("unreachable")

    async def _refuse(self, interaction: Interaction, text: str, reply: Reply | None) -> AgentResponse:
        """Answer without touching the session: nothing is stored for a message we cannot handle."""
        message = OutboundMessage(kind="error", text=text, id=f"{interaction.id}:x")
        if reply is not None:
            await reply(message)
        return AgentResponse(
            text=text, session_id=interaction.session_key, interaction_id=interaction.id, messages=[message]
        )

    async def _turn(self, interaction: Interaction, t: Turn, out: TurnOutput) -> AgentResponse:
        p = self._p
        saved, history = await p.store.load(interaction.session_key, p.settings.history_limit)
        seeded = interaction.thread_history if saved is None else []
        if seeded:
            history = seeded[-p.settings.history_limit :] if p.settings.history_limit else []
        state = saved or SessionState(
            session_id=interaction.session_key,
            workspace_id=interaction.context.workspace,
            channel_type=interaction.context.channel_type,
        )
        expected_version = state.version
        state.customer_id, state.turns = interaction.customer_id, state.turns + 1
        # The thread is shared; goals and confirmations are the person who wrote this message's.
        me = state.part(interaction.speaker, interaction.customer_id)
        # Each attempt reads the business data afresh, each order once.
        ctx = TurnContext(interaction, state, me, history, t, out, reads=TurnReads(p.data), now=p.clock())
        abandoned = goals.age(me, p.settings.goal_abandon_turns)
        received = {"abandoned": [g.type for g in abandoned], "memory": goals.memory(me, len(history))}
        if interaction.context.viewing:
            received["viewing"] = interaction.context.viewing
        t.emit("received", received)
        t.emit("history_loaded", {"count": len(history)})
        async with deadline(p.settings.turn_deadline_seconds):
            work = await self._work(ctx)
        results, cls, pref_update = work.results, work.cls, work.pref_update

        user = Message(role="user", text=interaction.text, metadata={"interaction_id": interaction.id})
        new_messages = [*seeded, user, *out.agent_messages()]
        total = len(history) - len(seeded) + len(new_messages)
        t.emit("memory_updated", {"appended": len(new_messages), "history_count": total})
        response = out.response(state, me, t.decided.intent or (cls.intent_id if cls else None), results)
        state.version = expected_version + 1
        state.updated_at = user.timestamp
        record = TurnRecord(
            state=state,
            expected_version=expected_version,
            messages=new_messages,
            events=t.events,
            effects=[*(e for r in results for e in r.effects), *out.effects],
            ledger={r.idempotency_key: r for r in results if r.idempotency_key and not r.replayed},
            inbox_key=interaction.id if interaction.from_inbox else None,
            outbox=out.held if interaction.from_inbox else [],
            trace_id=t.trace_id,
        )
        record.review = misses(record, t.outcome, history, self.redactor)  # a miss is kept with the turn that made it
        await p.store.commit(record)
        await self.desk.notify(out.alerts)
        if p.preferences is not None and pref_update is not None:
            await p.preferences.after(p.preferences.key(state, interaction.speaker), pref_update)
        return response

    async def _work(self, ctx: TurnContext) -> Work:
        """Everything of the turn that runs under its deadline: its steps, in order, until one ends it."""
        work = Work(ctx)
        for step in self.steps:
            if await step(work):
                break
        return work

    async def _handed_off(self, work: Work) -> bool:
        """A conversation with a person: the bot only acknowledges, once, that the person will answer."""
        state, out = work.ctx.state, work.ctx.out
        if state.handoff is None or not state.handoff.active:
            return False
        if notice := handoff.acknowledgement(state, self._p.messages):
            await out.send(OutboundMessage(kind="notice", text=notice))
        work.ctx.t.emit("response_generated", {"handoff": state.handoff.status, "silent": not out.outbound})
        return True

    async def _interpreted(self, work: Work) -> bool:
        """What the message does (`_interpret`); the choice question may have answered it already."""
        work.move, work.ctx = await self._interpret(work.ctx)
        return work.move is None  # the open question with choices answered it ("something else", a stale click)

    async def _waiting(self, work: Work) -> bool:
        """ "Wait" while an action waits for a yes: the question again, nothing else."""
        return isinstance(work.move, moves.Wait) and await self.confirmations.remind(work.ctx, waiting=True)

    async def _unsure(self, work: Work) -> bool:
        """An answer to the open yes/no question that is neither yes nor no: asked again, plainly."""
        move = work.move
        return isinstance(move, moves.Unsure) and await self.confirmations.unsure(work.ctx, move.answer)

    async def _controlled(self, work: Work) -> bool:
        """A control move (cancel, bye, thanks, start over) is answered by itself."""
        if not isinstance(work.move, moves.ControlMove):
            return False
        await self.ctl.answer(work.move, work.ctx)
        return True

    async def _interpret(self, ctx: TurnContext) -> tuple[moves.Move | None, TurnContext]:
        """What the message does: the answer to an open question with choices continues the request
        picked; a reply move read by the embedded model (yes, no, cancel, bye) needs no
        understanding; anything else is understood, then interpreted against the state. Returns
        the context completed with the customer and the intents they may use (None for the move
        when the choice question answered the message itself)."""
        reached = False
        if ctx.me.clarification is not None or ctx.interaction.action == "choose":
            ctx, reached = await self._reach(self._read(ctx)), True
            settled = await self.clarifier.settle(ctx)
            if settled.handled:
                return None, settled.ctx
            ctx = settled.ctx
            if settled.chosen is not None:
                return moves.Request(settled.chosen), ctx
        # A click on an order offered goes on as its ID typed: read here as typed words are.
        ctx = self._read(ctx)
        heard = self._heard(ctx)
        ctx = replace(ctx, answer=heard.answer)
        move = moves.reply(ctx, heard)
        if isinstance(move, moves.ControlMove | moves.Unsure):
            return move, ctx
        if not reached:
            ctx = await self._reach(ctx)
        if move is None:
            move = await self._answered(ctx, heard)
        changes = heard.answer is not None and heard.answer.effect == "replan"
        if move is None and heard.answer is not None and changes and not moves.asks_anew(ctx, heard):
            move = moves.Unsure(heard.answer)  # a change the waiting action cannot take starts nothing new
        if move is None:
            u = self.understanding
            found = await self.requests.understand(u.classifier, u.rules, ctx)
            if found[0].notice:
                await ctx.out.send(OutboundMessage(kind="notice", text=found[0].notice))
            move = moves.interpret(ctx, found, heard, self._p.registry.specs, self._p.registry.slots)
        return move, ctx

    def _read(self, ctx: TurnContext) -> TurnContext:
        """The context with the message's one reading; every later step and every understanding
        mode takes it, none reads the text again. A click that answers a question (confirm,
        cancel, a choice) has none; "talk to a human" stands for its words and is read as typed."""
        if ctx.reading is not None or ctx.interaction.action not in (None, "human"):
            return ctx
        return replace(ctx, reading=self.understanding.rules.read(ctx.interaction.text))

    async def _reach(self, ctx: TurnContext) -> TurnContext:
        """The context completed with the customer and the intents they may use here."""
        p, state = self._p, ctx.state
        customer = await (ctx.reads or p.data).get_customer(state.customer_id) if state.customer_id else None
        eligible = p.registry.for_session(ctx.interaction.context.channel_type.value, state, customer)
        ctx.t.emit("intents_eligible", {"eligible": [i.id for i in eligible]})
        return replace(ctx, customer=customer, eligible=eligible)

    async def _answered(self, ctx: TurnContext, heard: moves.Heard) -> moves.Move | None:
        """The value the bot asked for, or a new value for the action waiting for a yes, read by the
        embedded model whatever the understanding mode; None when the message is not one."""
        me, text = ctx.me, ctx.interaction.text
        if ctx.interaction.action is not None or not requests.waiting(me):
            return None
        assert ctx.reading is not None  # a typed message, read in `_interpret`
        said = self.understanding.rules.said(ctx.read, ctx.eligible)
        return (
            self.answers.change(me.pending_confirmation, said)
            or await self.own.answer(ctx, said)
            or self.answers.answer(me.active_goal, said, text, heard.value)
        )

    def _heard(self, ctx: TurnContext) -> moves.Heard:
        """What the message's reading and the awaited slot's pattern say of a typed message as a reply."""
        interaction, reading = ctx.interaction, ctx.reading
        text = interaction.text
        if reading is None:
            return moves.Heard(empty=False)
        goal = ctx.me.active_goal
        awaited = goal.missing[0] if goal is not None and goal.missing else None
        politeness = self.understanding.reader.politeness
        value = self.values.direct_answer(awaited, text, politeness) if awaited else None
        other = reading.intent not in (None, goal.intent_id if goal else None) and reading.sure
        if value is None and goal is not None and goal.choices and not other:
            # A pick from the list the question offered ("the second one") is a value of the awaited
            # kind, unless the message is plainly another request ("where is my order O-12345?").
            picked = self.own.names.chosen(text, goal.choices)
            value = picked[0].value if len(picked) == 1 else None
        said = reading.move
        if said is not None and None in reading.sentence_moves:
            said = None  # "No. the freezing" describes the problem; the "no" only leads into it
        spec = self._p.registry.slots.get(awaited) if awaited else None
        describes = spec is not None and spec.free_text and not spec.reply_pattern
        pending = ctx.me.pending_confirmation
        # While a yes/no question is open, the message is first read as a whole as its answer.
        asked = pending is not None and pending.kind == "tool"
        answer = self.understanding.rules.answer(text, pending.intent_id) if asked and pending else None
        return moves.Heard(said, reading.intent, self.ctl.says_nothing(text), value, describes, answer)

    async def _act(self, work: Work) -> bool:
        """Act on each request of the move in order; later ones queue while the bot waits for the user."""
        p, move, ctx = self._p, work.move, work.ctx
        assert move is not None  # `_interpreted` ended the turn otherwise
        cls = moves.classification(move)
        pref_update = None
        if p.preferences is not None:
            prefs, pref_update = await p.preferences.before(
                ctx.state, ctx.interaction.speaker, ctx.interaction.text, cls
            )
            ctx = replace(ctx, preferences=prefs)
        found = move.found if isinstance(move, moves.Several) else [cls]
        confirmed = ctx.me.pending_confirmation
        results = await self._understood(ctx, move, found[0])
        if isinstance(move, moves.Assent) and confirmed is not None:
            results += await self._also_asked(ctx, move.asked, confirmed.intent_id)
        for n, more in enumerate(found[1:], start=1):
            if requests.waiting(ctx.me):
                await self.requests.queue(ctx, found[n:], self)
                break
            results += await self._understood(ctx, move, more)
        work.results, work.cls, work.pref_update = results, cls, pref_update
        return True

    @property
    def intents(self) -> dict[str, Intent]:
        """Every intent of the registry, by id."""
        return self._p.registry.intents

    async def use_understanding(self, understanding: Understanding) -> None:
        """Read the next turns with understanding built afresh (reloaded banks): swapped in between
        turns, once the running ones have ended; turns arriving meanwhile wait for it."""
        async with self.gate.between_turns():
            self.understanding = understanding
            self.values = understanding.rules.slots
            self.answers = Answers(self._p.registry.specs, self.values)
            self.clarifier.reader = understanding.rules

    async def control(self, session_key: str, action: handoff.Action, actor: str, reply: Reply | None = None) -> str:
        """An admin claims or releases a handed-off session; returns what the thread is told."""
        return await self.desk.control(session_key, action, actor, reply)

    async def decide(self, session_key: str, verdict: handoff.Verdict, actor: str, **how: Any) -> str:
        """A person approves or denies the action held for them (`HandoffDesk.decide`)."""
        return await self.desk.decide(session_key, verdict, actor, **how)

    async def realert_unclaimed(self, now: datetime | None = None) -> list[Alert]:
        """Alert admins again about handoffs nobody claimed in time; channels call it periodically."""
        return await self.desk.realert_unclaimed(now)

    async def _understood(self, ctx: TurnContext, move: moves.Move, cls: Classification) -> list[ToolResult]:
        p, me, t = self._p, ctx.me, ctx.t
        settled = await self.confirmations.resolve(ctx, moves.yes_or_no(move), cls)
        if settled.outcome == "handled":
            return settled.results
        read = settled.cls or cls
        choosing = p.registry.vocabulary.choosing
        if (cls := followups.redirect(me, ctx.interaction.text, read, p.registry.specs, choosing)) is not read:
            t.decided.intent = t.decided.intent or cls.intent_id  # the turn's intent is the follow-up's
        pending = self.confirmations.take_offer(me)
        if pending is not None and pending.kind == "offer" and cls.intent_id == pending.intent_id:
            # "open a ticket" after the offer: its values, unless the message names its own (a value
            # that is the whole message, as a model may copy it, names nothing).
            named = {k: v for k, v in cls.params.items() if str(v).strip() != ctx.interaction.text.strip()}
            cls = cls.model_copy(update={"params": pending.params | named})
        intent = p.registry.get(cls.intent_id) if cls.intent_id else None
        if intent is None:
            await notices.unknown(ctx, cls, pending, p.messages, self.confirmations)
            return []
        classified = Classified(intent_id=intent.id, confidence=round(cls.confidence, 3), params=cls.params)
        if cls.candidates:
            classified.candidates = list(cls.candidates)
        if cls.clarify:
            classified.clarify = list(cls.clarify)
        if (chosen := t.decided.chosen) is not None:  # picked from "Did you mean ...?": recorded once, with its request
            classified.chosen, classified.asked_about = chosen.chosen, chosen.asked_about
            t.decided.chosen = None
        classified.redacted_params = sorted(set(cls.params) & p.registry.redacted_params)
        classified.fills_slot, classified.reply = cls.fills_slot, cls.reply
        t.classified(classified)
        if cls.clarify and settled.outcome != "run":
            await self.clarifier.ask(ctx, cls)  # unsure between requests: nothing is done until one is picked
            await self.confirmations.restate(ctx)
            return []
        if cls.offer:
            await self.confirmations.offer(ctx, intent.id, cls.offer, cls)
            return []
        agent = self._agent(intent)
        if intent.kind == "chat":
            results = await self.acting.run(agent, replace(ctx, preferences=None), goals.transient(intent), intent)
            t.emit("response_generated", {"length": len(ctx.out.final_text), "chat": True})
            await self.confirmations.restate(ctx)
            return results
        # A confirmed action resumes its goal with its own order; anything else may name one by its items.
        owned = own_orders.Owned(cls) if settled.outcome == "run" else await self.own.resolve(ctx, cls, intent)
        if owned.nothing is not None:
            # The customer named an item none of their orders holds: said so, and nothing is done.
            await ctx.out.send(OutboundMessage(kind="answer", text=owned.nothing))
            t.emit("response_generated", {"length": len(ctx.out.final_text), "own_orders": "none"})
            await self.confirmations.restate(ctx)
            return []
        cls = owned.cls
        self.confirmations.shelve(me, intent.id)
        carried: list[str] = []
        if not owned.named:  # a request that names its item takes no order remembered from before
            cls, carried = self.remembered.fill(me, cls, intent, ctx.interaction.text)
        update = goals.apply(me, cls, intent, agent)
        t.emit("goal_updated", update.model_dump() | {"goal_stack": goals.stack_types(me), "remembered": carried})
        goal = me.goals[update.goal_id]
        self.own.offer(goal, owned)
        results = await self.acting.run(agent, ctx, goal, intent)
        goal, resumed, more = await self._run_queued(ctx, goal)
        results += more
        handed_off = ctx.state.handoff is not None and ctx.state.handoff.active
        notice = resumed and not handed_off and notices.resume(resumed, goal.agent, p.messages, self.names(resumed))
        if notice:
            await ctx.out.send(notice)
        active = me.active_goal
        t.emit(
            "response_generated", {"length": len(ctx.out.final_text), "needs_input": bool(active and active.missing)}
        )
        await self.confirmations.restate(ctx)
        return results

    async def _also_asked(self, ctx: TurnContext, parts: tuple[str, ...], confirmed: str | None) -> list[ToolResult]:
        """What a yes came with besides the yes ("Sure, and where is O-34567?", "yes, and track my
        order"), each answered after the action ran as if it had been asked on its own, when it
        asks something this bot does other than the action confirmed and small talk (anything
        else is left: the action's answer is the reply). A side-effecting request among them
        asks its own yes first, as any request does."""
        results: list[ToolResult] = []
        u, specs = self.understanding, self._p.registry.specs
        for question in parts:
            reading = u.rules.read(question)
            spec = specs.get(reading.intent or "")
            if spec is None or spec.kind == "chat" or spec.id == confirmed:
                continue
            asked = ctx.interaction.model_copy(update={"text": question})
            sub = replace(ctx, interaction=asked, reading=reading)
            found = await self.requests.understand(u.classifier, u.rules, sub)
            move = moves.interpret(sub, found, self._heard(sub), self._p.registry.specs, self._p.registry.slots)
            results += await self._understood(sub, move, moves.classification(move))
        return results

    async def _run_queued(self, ctx: TurnContext, goal: Goal) -> tuple[Goal, Goal | None, list[ToolResult]]:
        """Later requests of an earlier message whose turn has come (nobody waits for the user) run
        now. Returns the last goal run, the goal the conversation is back to (None if `goal` is still
        active) and the results."""
        me, results = ctx.me, []
        resumed = me.active_goal if goal.id != me.active_goal_id else None
        while resumed is not None and resumed.queued and not requests.waiting(me):
            resumed.queued, goal = False, resumed
            intent = self._p.registry.intents[goal.intent_id]
            results += await self.acting.run(self._agent(intent), ctx, goal, intent)
            resumed = me.active_goal if goal.id != me.active_goal_id else None
        return goal, resumed, results

    def question(self, intent_id: str, slot: str) -> str:
        """The question for a missing slot, in the words of the intent's agent."""
        return self._agent(self._p.registry.intents[intent_id]).question(intent_id, slot)

    def _agent(self, intent: Intent) -> Planner:
        u = self.understanding
        return u.planners.get(intent.agent, u.templates)
