"""Support tools: order status, tickets and the human handoff."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import Field

from agent.domain.contexts import ToolContext
from agent.domain.types import SideEffect
from agent.errors import ToolError
from agent.tools.registry import Tool, ToolDeps, ToolOutput, ToolParams, tool_factory


class OrderParams(ToolParams):
    order_id: str = Field(pattern=r"^O-\d{3,10}$", description="Order id like O-12345")


class TicketParams(ToolParams):
    summary: str = Field(min_length=3, max_length=2000)
    order_id: str | None = Field(None, pattern=r"^O-\d{3,10}$")


class HandoffParams(ToolParams):
    reason: str = Field("The customer asked for a human.", max_length=2000)


def record(kind: Literal["ticket", "handoff"], prefix: str, ctx: ToolContext, status: str, **fields: Any) -> ToolOutput:
    """A new row owned by this session, with an id stable for the same session, turn and fields."""
    raw = "|".join((ctx.session_id, ctx.interaction_id, *(str(v) for v in fields.values())))
    row_id = f"{prefix}-{hashlib.sha256(raw.encode()).hexdigest()[:8].upper()}"
    row = {
        "id": row_id,
        "session_id": ctx.session_id,
        "customer_id": ctx.customer_id,
        "status": status,
        "created_at": ctx.now.isoformat(),
        **fields,
    }
    return ToolOutput(
        data={f"{kind}_id": row_id, "status": status}, effects=[SideEffect(kind=kind, key=row_id, data=row)]
    )


@tool_factory
def support_tools(deps: ToolDeps) -> list[Tool]:
    data = deps.data
    if data is None:
        return []

    async def check_order_status(p: OrderParams, ctx: ToolContext) -> ToolOutput:
        order = await (ctx.reads or data).get_order(p.order_id)
        if order is None:
            raise ToolError("check_order_status", f"Order {p.order_id} not found", code="not_found")
        return ToolOutput(data=dict(order))

    async def create_ticket(p: TicketParams, ctx: ToolContext) -> ToolOutput:
        return record("ticket", "T", ctx, "open", summary=p.summary, order_id=p.order_id)

    async def escalate_to_human(p: HandoffParams, ctx: ToolContext) -> ToolOutput:
        return record("handoff", "H", ctx, "requested", reason=p.reason)

    return [
        Tool(
            "check_order_status",
            "Look up an order's status, carrier, tracking and ETA.",
            OrderParams,
            check_order_status,
        ),
        Tool(
            "create_ticket",
            "Open a support ticket for a problem.",
            TicketParams,
            create_ticket,
            side_effect=True,
            records=("ticket",),
        ),
        Tool(
            "escalate_to_human",
            "Hand the conversation to a human support agent.",
            HandoffParams,
            escalate_to_human,
            side_effect=True,
            records=("handoff",),
        ),
    ]
