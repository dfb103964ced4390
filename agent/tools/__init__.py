"""Tools: each module declares its tools (`tool`, `tool_factory`); the gateway runs them behind permissions.

A project's own tool module needs only what is exported here (docs/tools.md).
"""

from agent.domain.contexts import ToolContext
from agent.domain.records import ToolRecord
from agent.domain.types import SideEffect
from agent.tools.registry import Tool, ToolDeps, ToolOutput, ToolParams, tool, tool_factory

__all__ = [
    "SideEffect",
    "Tool",
    "ToolContext",
    "ToolDeps",
    "ToolOutput",
    "ToolParams",
    "ToolRecord",
    "tool",
    "tool_factory",
]
