"""The tool gateway: the only way a tool runs. Permission, schema, timeout, idempotency."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from typing import Any, Protocol, runtime_checkable

from pydantic import ValidationError

from agent.context.reads import OwnRecords
from agent.domain.contexts import ToolContext
from agent.domain.types import ToolCall, ToolResult
from agent.errors import ToolArgumentsInvalid, ToolError, ToolNotAllowed, ToolTimeout
from agent.storage import SessionStore, ToolRecords
from agent.tools.registry import Tool


def idempotency_key(context: ToolContext, call: ToolCall) -> str:
    """Same session, intent, tool and canonical params: the same side effect, done once."""
    canonical = json.dumps(call.params, sort_keys=True, separators=(",", ":"), default=str)
    raw = f"{context.session_id}|{context.intent_id}|{call.tool_name}|{canonical}"
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


class ToolGateway:
    """
    Args:
        tools: every registered tool.
        permissions: agent name -> the tool names it may use.
        ledger: where results of side-effecting calls are looked up by idempotency key.
        default_timeout: seconds a tool may run unless it sets its own.
        records: where tools' records of kinds without a table of their own are read back (each
            run sees its requester's, of the kinds its tool declares); None: none are kept.
    """

    def __init__(
        self,
        tools: list[Tool],
        permissions: dict[str, list[str]],
        ledger: SessionStore,
        default_timeout: float = 5.0,
        records: ToolRecords | None = None,
    ):
        self.tools = {t.name: t for t in tools}
        self.permissions = {agent: frozenset(names) for agent, names in permissions.items()}
        self.ledger = ledger
        self.default_timeout = default_timeout
        self.records = records

    def needing_approval(self) -> frozenset[str]:
        """The tools whose declaration says they run only after the requester's yes."""
        return frozenset(name for name, t in self.tools.items() if t.needs_approval)

    def schemas(self, agent: str) -> list[dict[str, Any]]:
        return [self.tools[n].schema() for n in sorted(self.permissions.get(agent, ())) if n in self.tools]

    async def execute(self, call: ToolCall, context: ToolContext) -> ToolResult:
        started = time.perf_counter()
        try:
            tool = self._resolve(call, context.agent)
            try:
                params = tool.params.model_validate(call.params)
            except ValidationError as e:
                first = e.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "arguments"
                raise ToolArgumentsInvalid(tool.name, f"{where}: {first['msg']}") from e
            # A confirmed action is keyed by its confirmation hash: confirming it twice replays the result.
            key = (context.action_hash or idempotency_key(context, call)) if tool.side_effect else None
            if key and (previous := await self.ledger.ledger_get(key)) is not None:
                return previous.model_copy(update={"replayed": True})
            if tool.records:  # a tool that keeps no records reads none (ToolContext's default says so)
                own = OwnRecords(self.records, tool.name, frozenset(tool.records), context.owner)
                context = context.model_copy(update={"records": own})
            timeout = tool.timeout or self.default_timeout
            try:
                output = await asyncio.wait_for(tool.handler(params, context), timeout)
            except TimeoutError as e:
                raise ToolTimeout(tool.name, timeout) from e
            if undeclared := {e.kind for e in output.effects} - set(tool.records):
                # What storage forgets and reports on comes from the declaration: it must be whole.
                raise ToolError(tool.name, f"wrote undeclared records {sorted(undeclared)}", code="undeclared_record")
            if unheard := {a.kind for a in output.alerts} - set(tool.alerts):
                # Admin channels title an alert by its kind: a tool names the kinds it raises.
                raise ToolError(tool.name, f"raised undeclared alerts {sorted(unheard)}", code="undeclared_alert")
            return ToolResult(
                tool=tool.name,
                success=True,
                data=output.data,
                # Every record is the requester's: a tool writes none for somebody else.
                effects=[
                    e if e.owner == context.owner else e.model_copy(update={"owner": context.owner})
                    for e in output.effects
                ],
                alerts=output.alerts,
                idempotency_key=key,
                execution_time_ms=(time.perf_counter() - started) * 1000,
            )
        except ToolError as e:
            return ToolResult(
                tool=call.tool_name,
                success=False,
                error=str(e),
                error_code=e.code,
                data=e.data,
                execution_time_ms=(time.perf_counter() - started) * 1000,
            )

    def _resolve(self, call: ToolCall, agent: str) -> Tool:
        tool = self.tools.get(call.tool_name)
        if tool is None:
            raise ToolError(call.tool_name, "no such tool", code="unknown_tool")
        if call.tool_name not in self.permissions.get(agent, frozenset()):
            raise ToolNotAllowed(call.tool_name, agent)
        return tool


@runtime_checkable
class ToolExecutor(Protocol):
    async def execute(self, call: ToolCall, context: ToolContext) -> ToolResult: ...
