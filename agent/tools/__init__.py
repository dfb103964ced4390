"""Tools: typed parameters, a gateway that enforces permissions, and the built-in handlers."""

from agent.tools.registry import Tool, ToolOutput

__all__ = ["Tool", "ToolOutput"]
