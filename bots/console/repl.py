"""The console REPL: line editing and history (readline), slash commands, and a prompt that always answers.

Each turn runs on one long-lived event loop on the main thread, and the loop also waits for each line,
which `LineReader` reads on a daemon thread: Ctrl-C (SIGINT, delivered to the main thread) and Ctrl-D
end the console at once, while typing or mid-turn.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import queue
import signal
import sys
import threading
from pathlib import Path
from typing import Any, TextIO

from agent.app import App
from agent.config.schema import Settings, UnderstandingMode
from bots.app import check_store
from bots.console.commands import HANDED_OFF, ConsoleState, run_command
from bots.console.session import handed_off, one_shot

PROMPT = "you> "
HISTORY = Path.home() / ".agentbot_history"


def mode_line(settings: Settings) -> str:
    """The understanding that actually runs (flags and environment included), in words."""
    llm = f"{settings.llm.provider} {settings.llm.model}"
    match settings.understanding:
        case UnderstandingMode.LLM:
            return f"llm ({llm})"
        case UnderstandingMode.CASCADE:
            return f"cascade (rules first, {llm} when unsure)"
        case UnderstandingMode.RULES:
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


def _settle(line: asyncio.Future[str | None], text: str | None, error: Exception | None) -> None:
    if line.done():  # a Ctrl-C cancelled the wait: the line is nobody's
        return
    if error is not None:
        line.set_exception(error)
    else:
        line.set_result(text)


class LineReader:
    """input() with readline on a daemon thread, one line per request.

    On the main thread a Ctrl-C can be lost: when it lands while readline handles a key, the terminal drops
    the typed-ahead bytes and readline waits in its own select(), which retries on EINTR, for a key that never
    comes; Python sees the signal only after the next key. Here the main thread waits in the event loop,
    which Ctrl-C always interrupts, and the daemon thread left inside readline never holds the exit.
    """

    def __init__(self, inp: TextIO, out: TextIO) -> None:
        self.inp, self.out = inp, out
        self._requests: queue.SimpleQueue[tuple[asyncio.AbstractEventLoop, asyncio.Future[str | None]]]
        self._requests = queue.SimpleQueue()
        self._modes = _terminal_modes(inp)  # cooked, as readline found it and restores it after each line
        self.reading = False
        threading.Thread(target=self._serve, name="agentbot-console-input", daemon=True).start()

    async def read(self) -> str | None:
        loop = asyncio.get_running_loop()
        line: asyncio.Future[str | None] = loop.create_future()
        self._requests.put((loop, line))
        return await line

    def _serve(self) -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # the kernel gives Ctrl-C to the main thread
        while True:
            loop, line = self._requests.get()
            text: str | None = None
            error: Exception | None = None
            self.reading = True
            try:
                text = input(PROMPT)
            except EOFError:  # Ctrl-D
                pass
            except Exception as e:  # undecodable bytes and the like: raised where the loop waits
                error = e
            finally:
                self.reading = False
            with contextlib.suppress(RuntimeError):  # the loop is closed: the console is ending
                loop.call_soon_threadsafe(_settle, line, text, error)

    def close(self) -> None:
        """Leave the terminal as readline leaves it after a line, had Ctrl-C cut one short (the last thing
        before the exit, so a read that was only starting cannot undo it)."""
        if self._modes is not None:
            import termios

            with contextlib.suppress(OSError, termios.error):
                termios.tcsetattr(self.inp.fileno(), termios.TCSADRAIN, self._modes)
        if self.reading and os.environ.get("TERM", "dumb") != "dumb":
            print("\x1b[?2004l", end="", file=self.out, flush=True)  # bracketed paste off


def _terminal_modes(inp: TextIO) -> list[Any] | None:
    try:
        import termios
    except ImportError:  # Windows
        return None
    try:
        return termios.tcgetattr(inp.fileno())
    except (OSError, termios.error):  # not a terminal after all
        return None


class Repl:
    def __init__(self, app: App, runner: asyncio.Runner, state: ConsoleState, inp: TextIO, out: TextIO):
        self.app, self.runner, self.state, self.inp, self.out = app, runner, state, inp, out
        self.interactive = inp.isatty() and out.isatty()
        self.lines = LineReader(inp, out) if self.interactive else None

    def banner(self, version: str, project: str) -> None:
        print(f"agentbot {version} console - understanding: {mode_line(self.app.settings)}", file=self.out)
        print(project, file=self.out)
        print(f"You are {self.who} in conversation {self.state.session}.", file=self.out)
        print(
            "/customer C-002 speaks as another customer, /customer alone as a guest; /reset puts the demo data back.",
            file=self.out,
        )
        print('Try "Where\'s my order O-12345?". /help lists commands; Ctrl-D or Ctrl-C quits.', file=self.out)
        if self.runner.run(handed_off(self.app, self.state.session)):
            print(HANDED_OFF, file=self.out)

    @property
    def who(self) -> str:
        if not self.state.customer:
            return "a guest"
        customer = self.runner.run(self.app.data.get_customer(self.state.customer)) or {}
        name = customer.get("name")
        return f"{name} (customer {self.state.customer})" if name else f"customer {self.state.customer}"

    def read(self) -> str | None:
        """The next line, or None at the end of input."""
        if self.lines is not None:
            return self.runner.run(self.lines.read())
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
            if self.app.reload is not None:  # labels applied meanwhile are read before this turn is
                self.runner.run(self.app.reload.catch_up())
            response = self.runner.run(one_shot(self.app, text, s.session, s.customer, False, self.out))
            if response.handoff:
                print(HANDED_OFF, file=self.out, flush=True)


async def _ended(task: asyncio.Task[None]) -> None:
    with contextlib.suppress(asyncio.CancelledError):
        await task


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
    runner = asyncio.Runner()
    repl: Repl | None = None
    watcher: asyncio.Task[None] | None = None
    try:
        runner.run(check_store(app))
        if customer and runner.run(app.data.get_customer(customer)) is None:
            print(f"(no customer {customer} in the data, so you are a guest)", file=sys.stderr)
            customer = None
        if message is not None:
            response = runner.run(one_shot(app, message, session, customer, as_json, out))
            if not as_json and not response.text and runner.run(handed_off(app, session)):
                print(HANDED_OFF, file=out)  # the bot stayed quiet: say why, instead of printing nothing
            return 0
        state = ConsoleState(session=session, customer=customer, base=base or session)
        repl = Repl(app, runner, state, sys.stdin, out)
        if app.reload is not None:
            # While the prompt waits the loop runs, and labels applied meanwhile are read then.
            watcher = runner.get_loop().create_task(app.reload.watch(), name="agentbot-reload-watch")
        if repl.interactive:
            # A shell that started us in the background leaves SIGINT ignored, and Python then installs
            # no handler; a person at this terminal still means "quit" when they press Ctrl-C.
            signal.signal(signal.SIGINT, signal.default_int_handler)
            _enable_line_editing()
            repl.banner(version, project)
        repl.loop()
        if repl.interactive:
            print("bye", file=out)
    except KeyboardInterrupt:  # Ctrl-C at start-up, at the prompt or mid-turn (its task is cancelled)
        with contextlib.suppress(KeyboardInterrupt):
            print("\nbye", file=out, flush=True)
    finally:
        # What a turn stored is committed when it is acknowledged; closing flushes traces and the pool.
        # A second Ctrl-C while that runs leaves without waiting for it, and without a traceback.
        with contextlib.suppress(KeyboardInterrupt):
            try:
                if watcher is not None:
                    watcher.cancel()
                    runner.run(_ended(watcher))
                runner.run(app.aclose())
            finally:
                runner.close()
                if repl is not None and repl.lines is not None:
                    repl.lines.close()
    return 0
