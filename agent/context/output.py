"""What a turn shows and leaves behind: its messages, the alerts admins hear, the rows it writes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, runtime_checkable

from agent.conversation import goals
from agent.conversation.session import SessionState, Speaker
from agent.domain.types import AgentResponse, Alert, Message, OutboundMessage, SideEffect, ToolResult
from agent.redaction import Redactor

# The channel's way to deliver a message while the turn is still running.
Reply = Callable[[OutboundMessage], Awaitable[None]]


@runtime_checkable
class AlertNotifier(Protocol):
    """Posts admin alerts (Slack or Discord admin channel). Must not raise into the turn."""

    async def notify(self, alert: Alert) -> None: ...


class TurnOutput:
    """
    Args:
        interaction_id: the message the turn answers; its messages' ids derive from it.
        redactor: masks the known secrets in outbound text.
        reply: the channel's delivery callable, or None to collect only.
        delivered: pre-messages already shown by an earlier attempt of this same turn; a retry
            after a version conflict does not send them twice.
    """

    def __init__(self, interaction_id: str, redactor: Redactor, reply: Reply | None, delivered: list[OutboundMessage]):
        self.interaction_id = interaction_id
        self.redactor = redactor
        self.reply = reply
        self.delivered = delivered
        self._skip = list(delivered)
        self.outbound: list[OutboundMessage] = []
        self.held: list[OutboundMessage] = []  # shown only after the turn commits
        self._pre = 0
        self.alerts: list[Alert] = []  # sent to admins after the turn commits
        self.effects: list[SideEffect] = []  # rows the turn writes besides its tools' (handoff state)

    async def send(self, message: OutboundMessage) -> None:
        """A pre-message goes out now (before slow tools run); everything else waits for the
        commit, so nothing that depends on the turn's side effects is shown before they are saved."""
        if self.redactor.secrets:  # what is shown is also stored (messages, outbox): never a known secret
            message = message.model_copy(update={"text": self.redactor.known(message.text)})
        if message.kind != "pre" or self.held:
            # A pre-message after held answers (the second of several requests) waits with them,
            # so the thread shows the turn's messages in the order they were made.
            message = message.model_copy(update={"id": f"{self.interaction_id}:{len(self.held)}"})
            self.outbound.append(message)
            self.held.append(message)
            return
        message = message.model_copy(update={"id": f"{self.interaction_id}:p{self._pre}"})
        self._pre += 1
        self.outbound.append(message)
        if message in self._skip:
            self._skip.remove(message)
            return
        self.delivered.append(message)
        if self.reply is not None:
            await self.reply(message)

    async def flush(self) -> None:
        """Deliver what the turn held back; called once its commit succeeded."""
        if self.reply is not None:
            for message in self.held:
                await self.reply(message)

    def agent_messages(self) -> list[Message]:
        meta = {"interaction_id": self.interaction_id}
        return [Message(role="agent", text=m.text, kind=m.kind, metadata=meta) for m in self.outbound]

    def response(
        self, state: SessionState, me: Speaker, intent_id: str | None, results: list[ToolResult]
    ) -> AgentResponse:
        """What the router returns for this committed turn."""
        goal = me.active_goal
        asking = next((m for m in reversed(self.outbound) if m.kind in ("question", "fallback")), None)
        return AgentResponse(
            text=self.final_text,
            session_id=state.session_id,
            interaction_id=self.interaction_id,
            intent_id=intent_id,
            tool_results=results,
            needs_user_input=asking is not None or me.pending_confirmation is not None,
            confirmation=me.pending_confirmation is not None and me.pending_confirmation.kind == "tool",
            missing_param=goal.missing[0] if goal and goal.missing else None,
            active_goal=goal.type if goal else None,
            goal_stack=goals.stack_types(me),
            handoff=state.handoff is not None and state.handoff.active,
            messages=self.outbound,
            alerts=[a.kind for a in self.alerts],
        )

    @property
    def final_text(self) -> str:
        return "\n\n".join(m.text for m in self.outbound if m.kind != "pre")
