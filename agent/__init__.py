"""agentbot's core: the router, goals, understanding, tools and their Protocols.

`build_router` is the composition root; it lives in `bots.compose` because it wires adapters
(storage, data) that the core never imports, and is re-exported here lazily for convenience.
"""

from __future__ import annotations

from typing import Any

__all__ = ["build_router"]


def __getattr__(name: str) -> Any:
    if name == "build_router":
        from bots.compose import build_router

        return build_router
    raise AttributeError(name)
