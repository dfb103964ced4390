"""Support tools: order status, tickets and the human handoff."""

from __future__ import annotations

import hashlib

from pydantic import Field

from agent.errors import ToolError
from agent.interfaces import DataSource, ToolContext
from agent.tools.registry import Tool, ToolOutput, ToolParams
from agent.types import SideEffect, utcnow


class OrderParams(ToolParams):
    order_id: str = Field(pattern=r"^O-\d{3,10}$", description="Order id like O-12345")


class TicketParams(ToolParams):
    summary: str = Field(min_length=3, max_length=2000)
    order_id: str | None = Field(None, pattern=r"^O-\d{3,10}$")


class HandoffParams(ToolParams):
    reason: str = Field("The customer asked for a human.", max_length=2000)


def _short_id(prefix: str, context: ToolContext, *parts: str) -> str:
    digest = hashlib.sha256("|".join((context.session_id, context.interaction_id, *parts)).encode())
    return f"{prefix}-{digest.hexdigest()[:8].upper()}"


def support_tools(data: DataSource) -> list[Tool]:
    async def check_order_status(p: OrderParams, ctx: ToolContext) -> ToolOutput:
        order = await data.get_order(p.order_id)
        if order is None:
            raise ToolError("check_order_status", f"Order {p.order_id} not found", code="not_found")
        return ToolOutput(data=dict(order))

    async def create_ticket(p: TicketParams, ctx: ToolContext) -> ToolOutput:
        ticket_id = _short_id("T", ctx, p.summary, p.order_id or "")
        row = {
            "id": ticket_id,
            "session_id": ctx.session_id,
            "customer_id": ctx.customer_id,
            "summary": p.summary,
            "order_id": p.order_id,
            "status": "open",
            "created_at": utcnow().isoformat(),
        }
        return ToolOutput(
            data={"ticket_id": ticket_id, "status": "open"},
            effects=[SideEffect(kind="ticket", key=ticket_id, data=row)],
        )

    async def escalate_to_human(p: HandoffParams, ctx: ToolContext) -> ToolOutput:
        handoff_id = _short_id("H", ctx, p.reason)
        row = {
            "id": handoff_id,
            "session_id": ctx.session_id,
            "customer_id": ctx.customer_id,
            "reason": p.reason,
            "status": "requested",
            "created_at": utcnow().isoformat(),
        }
        return ToolOutput(
            data={"handoff_id": handoff_id, "status": "requested"},
            effects=[SideEffect(kind="handoff", key=handoff_id, data=row)],
        )

    return [
        Tool(
            "check_order_status",
            "Look up an order's status, carrier, tracking and ETA.",
            OrderParams,
            check_order_status,
        ),
        Tool("create_ticket", "Open a support ticket for a problem.", TicketParams, create_ticket, side_effect=True),
        Tool(
            "escalate_to_human",
            "Hand the conversation to a human support agent.",
            HandoffParams,
            escalate_to_human,
            side_effect=True,
        ),
    ]
