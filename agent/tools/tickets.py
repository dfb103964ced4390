"""The ticket lookup: what became of the support tickets a customer asked the bot to open.

"Any news on my ticket?" asks about something that exists, so it is answered from the tickets the
bot wrote (agent/tools/orders.py `create_ticket`), never by opening another. A customer sees their
own tickets from any conversation; a guest only those opened in this conversation.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from agent.domain.contexts import ToolContext
from agent.domain.records import TicketRecord
from agent.tools.registry import Tool, ToolDeps, ToolOutput, ToolParams, tool_factory

SHOWN = 3  # the newest tickets an answer names; a longer history is for a person to go through


class TicketLookupParams(ToolParams):
    order_id: str | None = Field(None, pattern=r"^O-\d{3,10}$", description="Only the tickets about this order")


@tool_factory
def ticket_tools(deps: ToolDeps) -> list[Tool]:
    """The lookup; none when the storage keeps no tickets to read."""
    if deps.tickets is None:
        return []
    store = deps.tickets

    async def check_tickets(p: TicketLookupParams, ctx: ToolContext) -> ToolOutput:
        found = await store.tickets_of(ctx.customer_id, ctx.session_id, SHOWN if p.order_id is None else 100)
        shown = [t for t in found if p.order_id in (None, t.order_id)][:SHOWN]
        data: dict = {"status": "none" if not shown else "one" if len(shown) == 1 else "listed", "count": len(shown)}
        if shown:
            newest = shown[0]
            data |= {
                "ticket_id": newest.id,
                "summary": newest.summary,
                "opened": newest.created_at.isoformat(),
                "ticket_status": newest.status,
                "listing": "\n".join(_line(t) for t in shown),
            }
        return ToolOutput(data=data)

    return [
        Tool(
            "check_tickets",
            "Look up the support tickets the customer already opened: what each is about, when it was "
            "opened and whether it is still open. Opens nothing.",
            TicketLookupParams,
            check_tickets,
        )
    ]


def _line(ticket: TicketRecord) -> str:
    about = f" (order {ticket.order_id})" if ticket.order_id else ""
    return f'- {ticket.id}, opened {_day(ticket.created_at)}{about}: "{ticket.summary}" - {ticket.status}'


def _day(at: datetime) -> str:
    return f"{at:%b} {at.day}, {at.year}"
