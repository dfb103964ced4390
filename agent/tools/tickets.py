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
        # A listing, newest first, with the newest one's details for a one-ticket answer: what
        # was asked after, never a ticket this call opened.
        status = "no_tickets" if not shown else "one" if len(shown) == 1 else "listed"
        data: dict = {"status": status, "count": len(shown)}
        if shown:
            latest = shown[0]
            data |= {
                "latest_ticket": latest.id,
                "latest_about": latest.summary,
                "latest_opened": latest.created_at.isoformat(),
                "latest_state": latest.status,
                "listing": "\n".join(_line(t) for t in shown),
            }
        return ToolOutput(data=data)

    return [
        Tool(
            "check_tickets",
            "Read the customer's earlier tickets and complaints: each one's date and state. Changes nothing.",
            TicketLookupParams,
            check_tickets,
        )
    ]


def _line(ticket: TicketRecord) -> str:
    about = f" (order {ticket.order_id})" if ticket.order_id else ""
    return f'- {ticket.id}, opened {_day(ticket.created_at)}{about}: "{ticket.summary}" - {ticket.status}'


def _day(at: datetime) -> str:
    return f"{at:%b} {at.day}, {at.year}"
