"""The `agentbot` command line: chat, slack, discord, eval, bench, sessions, trace."""

from bots.cli.main import main

__all__ = ["main"]
