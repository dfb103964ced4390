"""The console REPL: line editing and history (readline), slash commands, and a prompt that always answers.

Lines are read on the main thread and each turn runs on one long-lived event loop, so Ctrl-C and
Ctrl-D end the console at once, even mid-turn (a reading thread would hold the process until Enter).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import signal
import sys
from pathlib import Path
from typing import Any, TextIO

from agent.app import App
from agent.config import Settings
from bots.app import check_store
from bots.console.commands import HANDED_OFF, ConsoleState, run_command
from bots.console.session import handed_off, one_shot

PROMPT = "you> "
HISTORY = Path.home() / ".agentbot_history"


def mode_line(settings: Settings) -> str:
    """The understanding that actually runs (flags and environment included), in words."""
    llm = f"{settings.llm.provider} {settings.llm.model}"
    if settings.understanding == "llm":
        return f"llm ({llm})"
    if settings.understanding == "cascade":
        return f"cascade (rules first, {llm} when unsure)"
    return "rules (offline, no LLM)"


def _enable_line_editing() -> None:
    """Arrow keys, Ctrl-A/E, and history kept in ~/.agentbot_history across runs."""
    try:
        import readline
    except ImportError:  # Windows without pyreadline: plain input still works
        return
    with contextlib.suppress(OSError):
        readline.read_history_file(HISTORY)
    readline.set_history_length(1000)
    atexit.register(_save_history, readline)


def _save_history(readline: Any) -> None:
    with contextlib.suppress(OSError):
        readline.write_history_file(HISTORY)


class Repl:
    def __init__(self, app: App, runner: asyncio.Runner, state: ConsoleState, inp: TextIO, out: TextIO):
        self.app, self.runner, self.state, self.inp, self.out = app, runner, state, inp, out
        self.interactive = inp.isatty() and out.isatty()

    def banner(self, version: str, project: str) -> None:
        print(f"agentbot {version} console - understanding: {mode_line(self.app.settings)}", file=self.out)
        print(project, file=self.out)
        who = f"customer {self.state.customer}" if self.state.customer else "a guest (/customer C-001 to be one)"
        print(f"You are {who} in conversation {self.state.session}.", file=self.out)
        print('Try "Where\'s my order O-12345?". /help lists commands; Ctrl-D or Ctrl-C quits.', file=self.out)
        if self.runner.run(handed_off(self.app, self.state.session)):
            print(HANDED_OFF, file=self.out)

    def read(self) -> str | None:
        """The next line, or None at the end of input."""
        if self.interactive:
            try:
                return input(PROMPT)
            except EOFError:
                return None
        line = self.inp.readline()
        return line if line else None

    def loop(self) -> None:
        while not self.state.done:
            line = self.read()
            if line is None:
                break
            text = line.strip()
            if not text:
                continue
            if text.lower() in {"exit", "quit"}:
                break
            if text.startswith("/"):
                self.runner.run(run_command(self.app, self.state, text, self.out))
                continue
            s = self.state
            response = self.runner.run(one_shot(self.app, text, s.session, s.customer, False, self.out))
            if response.handoff:
                print(HANDED_OFF, file=self.out, flush=True)


def run_chat(
    app: App,
    message: str | None,
    session: str,
    customer: str | None,
    as_json: bool,
    *,
    version: str = "",
    project: str = "",
    base: str | None = None,
) -> int:
    """`agentbot chat`: one message with `-m`, else the REPL until Ctrl-D, Ctrl-C or /quit."""
    out = sys.stdout
    with asyncio.Runner() as runner:
        try:
            runner.run(check_store(app))
            if message is not None:
                runner.run(one_shot(app, message, session, customer, as_json, out))
                return 0
            state = ConsoleState(session=session, customer=customer, base=base or session)
            repl = Repl(app, runner, state, sys.stdin, out)
            if repl.interactive:
                # A shell that started us in the background leaves SIGINT ignored, and Python then installs
                # no handler; a person at this terminal still means "quit" when they press Ctrl-C.
                signal.signal(signal.SIGINT, signal.default_int_handler)
                _enable_line_editing()
                repl.banner(version, project)
            repl.loop()
            if repl.interactive:
                print("bye", file=out)
        except KeyboardInterrupt:
            print("", file=out)
        finally:
            runner.run(app.aclose())
    return 0
