"""The console channel: a REPL with slash commands, and one-shot messages, on the same router as every channel."""

from bots.console.repl import run_chat
from bots.console.session import default_session

__all__ = ["default_session", "run_chat"]
