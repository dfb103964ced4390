"""The refund tool: records a refund and marks the order refunded, once per confirmed action."""

from __future__ import annotations

import hashlib

from pydantic import Field

from agent.domain.contexts import ToolContext
from agent.domain.types import SideEffect
from agent.errors import ToolError
from agent.tools.registry import Tool, ToolDeps, ToolOutput, ToolParams, tool_factory


class RefundParams(ToolParams):
    order_id: str = Field(pattern=r"^O-\d{3,10}$", description="Order id like O-12345")
    amount: float | None = Field(None, gt=0, description="Amount to refund; the whole order if omitted")


@tool_factory
def refund_tools(deps: ToolDeps) -> list[Tool]:
    data = deps.data
    if data is None:
        return []

    async def issue_refund(p: RefundParams, ctx: ToolContext) -> ToolOutput:
        order = await (ctx.reads or data).get_order(p.order_id)
        if order is None:
            raise ToolError("issue_refund", f"Order {p.order_id} not found", code="not_found")
        # What is left to refund: the total less every refund already recorded for the order.
        total = round(float(order.get("amount") or 0) - float(order.get("refund_amount") or 0), 2)
        amount = round(p.amount if p.amount is not None else total, 2)
        if amount > total or amount <= 0:
            raise ToolError(
                "issue_refund", f"{amount} exceeds what is left to refund ({total})", code="amount_too_high"
            )
        # The confirmation hash names the action; without one (allow-all policy) the call itself.
        basis = ctx.action_hash or f"{ctx.session_id}|{ctx.interaction_id}|{p.order_id}|{amount}"
        refund_id = "R-" + hashlib.sha256(basis.encode()).hexdigest()[:8].upper()
        now = ctx.now.isoformat()
        row = {
            "id": refund_id,
            "session_id": ctx.session_id,
            "customer_id": ctx.customer_id,
            "order_id": p.order_id,
            "amount": amount,
            "status": "issued",
            "created_at": now,
        }
        update = {"order_id": p.order_id, "status": "refunded", "refunded_at": now, "refund_amount": amount}
        return ToolOutput(
            data={"refund_id": refund_id, "order_id": p.order_id, "amount": amount, "status": "refunded"},
            effects=[
                SideEffect(kind="refund", key=refund_id, data=row),
                SideEffect(kind="order_update", key=p.order_id, data=update),
            ],
        )

    return [
        Tool(
            "issue_refund",
            "Refund a delivered order, in full or in part. Needs the customer's confirmation.",
            RefundParams,
            issue_refund,
            side_effect=True,
            needs_approval=True,  # money leaves the store: the customer says yes to the exact amount
            records=("refund", "order_update"),
        )
    ]
