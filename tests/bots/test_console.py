"""The console as a person uses it, through a pseudo-terminal: line editing, slash commands, handoff, Ctrl-C."""

from __future__ import annotations

import getpass
import os
import shlex
import sqlite3
import sys
from pathlib import Path

import pexpect

from agent.config.schema import LLMSettings, Settings
from bots.console.repl import mode_line
from tests.helpers import REPO
from tests.standins.llm_server import Reply, StandInLLM

UP = "\x1b[A"


def chat(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[list[str], dict[str, str]]:
    """`agentbot chat` on a fresh database and home folder: its argv and environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTBOT_")} | (env or {})
    env |= {"HOME": str(tmp_path), "TERM": "xterm", "AGENTBOT_TRACING": "off"}
    db = f"sqlite+aiosqlite:///{tmp_path / 'console.db'}"
    return [sys.executable, "-m", "bots.cli", "chat", "--db-url", db, *args], env


def spawn(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
    argv, env = chat(tmp_path, *args, env=env)
    return pexpect.spawn(
        argv[0], argv[1:], cwd=str(REPO), env=env, encoding="utf-8", timeout=30, dimensions=(40, 200)
    )  # fmt: skip


def stored_user_lines(tmp_path: Path, session: str) -> list[str]:
    with sqlite3.connect(tmp_path / "console.db") as db:
        rows = db.execute("SELECT text FROM messages WHERE session_id = ? AND role = 'user' ORDER BY id", (session,))
        return [r[0] for r in rows]


def test_history_customer_handoff_resume_and_ctrl_c(tmp_path: Path) -> None:
    child = spawn(tmp_path, "--customer", "guest")
    child.expect_exact("understanding: rules (offline, no LLM)")
    child.expect_exact("You are a guest")
    child.expect_exact("you> ")
    child.sendline("Where's my order O-12345?")
    child.expect_exact("I can only share details of orders on your account")  # a guest sees nothing of it
    child.expect_exact("you> ")
    child.send(UP + "\r")  # the arrow recalls the last line instead of sending ^[[A
    child.expect_exact("I can only share details of orders on your account")
    child.expect_exact("you> ")
    child.sendline("/customer c-001")
    child.expect_exact("(you are Alice Moreno, customer C-001, in conversation console:")
    child.sendline("talk to a human")
    child.expect_exact("A person has this conversation now")
    child.sendline("hello, anyone?")
    child.expect_exact("A person has this conversation now")  # said on every message while handed off
    child.expect_exact("/resume hands it back")
    child.sendline("/resume")
    child.expect_exact("I'm back in this conversation")
    child.sendline("refund O-23456")  # Alice's order: the refund is hers to ask for
    child.expect_exact("Refund ฿3,290 for order O-23456?")
    child.sendline("no")
    child.sendline("where is O-12345")
    child.expect_exact("has shipped via UPS")
    child.expect_exact("you> ")
    child.sendintr()  # Ctrl-C at the prompt ends the console at once
    child.expect(pexpect.EOF, timeout=30)
    child.close()
    assert child.exitstatus == 0
    # The guest's conversation and Alice's are separate sessions: nobody acts in another's.
    guest = f"console:{getpass.getuser()}"
    assert stored_user_lines(tmp_path, guest) == ["Where's my order O-12345?", "Where's my order O-12345?"]
    alice = stored_user_lines(tmp_path, f"{guest}:C-001")
    assert alice == ["talk to a human", "hello, anyone?", "refund O-23456", "no", "where is O-12345"]
    assert "Where's my order O-12345?" in (tmp_path / ".agentbot_history").read_text()


def test_a_handed_off_conversation_says_so_at_start_and_new_leaves_it(tmp_path: Path) -> None:
    first = spawn(tmp_path, "--customer", "C-001")  # Alice's conversation, which she comes back to
    first.sendline("talk to a human")
    first.expect_exact("A person has this conversation now")
    first.expect_exact("you> ")  # the line editor reads again: Ctrl-D now ends the session
    first.sendeof()  # Ctrl-D
    first.expect(pexpect.EOF, timeout=30)
    again = spawn(tmp_path, "--customer", "C-001")
    again.expect_exact("A person has this conversation now")
    again.expect_exact("you> ")
    again.sendline("/new")
    again.expect_exact("(new conversation console:")
    again.sendline("where is O-12345")
    again.expect_exact("has shipped via UPS")
    again.sendline("/sessions")
    again.expect_exact("* console:")
    again.sendline("/quit")
    again.expect(pexpect.EOF, timeout=30)


def test_ctrl_c_while_typing_exits_at_once_with_a_goodbye(tmp_path: Path) -> None:
    # The ^C follows the typed bytes within milliseconds, so it often lands while readline handles them: the
    # terminal then drops the rest of the line, and a console reading on its main thread waited for a key.
    child = spawn(tmp_path)
    child.expect_exact("you> ")
    child.send("Where's my order")  # half a line, no Enter
    child.sendintr()
    child.expect_exact("bye")
    child.expect(pexpect.EOF, timeout=30)
    child.close()
    assert child.exitstatus == 0
    assert "Traceback" not in child.before
    assert stored_user_lines(tmp_path, f"console:{getpass.getuser()}") == []  # half a line is not a message


def test_ctrl_c_mid_line_leaves_the_terminal_as_the_shell_gave_it(tmp_path: Path) -> None:
    # readline, cut off mid-line, cannot restore the terminal itself: the shell after us must still echo.
    # The shell ignores Ctrl-C (its child then starts with SIGINT ignored, as a backgrounded job would).
    argv, env = chat(tmp_path)
    script = f"trap '' INT; {shlex.join(argv)}; echo exit=$?; stty -a"
    child = pexpect.spawn("/bin/sh", ["-c", script], cwd=str(REPO), env=env, encoding="utf-8", timeout=30)
    child.expect_exact("you> ")
    child.send("Where's my order")
    child.sendintr()
    child.expect_exact("bye")
    child.expect_exact("exit=0")
    child.expect(pexpect.EOF, timeout=30)
    modes = child.before.split()
    assert "icanon" in modes and "echo" in modes  # cooked, as before the console started


def test_ctrl_c_mid_turn_exits_at_once_and_keeps_the_answered_turns(tmp_path: Path, llm_server: StandInLLM) -> None:
    env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": llm_server.openai_url}
    child = spawn(tmp_path, "--understanding", "llm", "--provider", "openai", "--customer", "C-001", env=env)
    child.expect_exact("you> ")
    child.sendline("where is my order O-12345?")
    child.expect_exact("is shipped with UPS")
    child.expect_exact("you> ")
    asked = len(llm_server.seen)
    llm_server.queue.append(Reply(delay=120, text="Your order O-23456 is on its way."))  # the model hangs
    child.sendline("and where is O-23456?")
    while len(llm_server.seen) == asked:  # the turn is waiting for the model
        child.expect(pexpect.TIMEOUT, timeout=0.05)
    child.sendintr()
    child.expect_exact("bye")
    child.expect(pexpect.EOF, timeout=30)  # long before the model would answer
    child.close()
    assert child.exitstatus == 0
    assert "Traceback" not in child.before and "on its way" not in child.before
    alice = stored_user_lines(tmp_path, f"console:{getpass.getuser()}:C-001")
    assert alice == ["where is my order O-12345?"]  # the answered turn is kept; the cut one left nothing half-done
    with sqlite3.connect(tmp_path / "console.db") as db:
        said = [r[0] for r in db.execute("SELECT text FROM messages WHERE role = 'agent' ORDER BY id")]
    assert any("is shipped with UPS" in t for t in said) and not any("on its way" in t for t in said)


def test_the_banner_names_the_mode_that_runs() -> None:
    llm = LLMSettings(provider="anthropic", model="claude-sonnet-4-5")
    assert mode_line(Settings(understanding="llm", llm=llm)) == "llm (anthropic claude-sonnet-4-5)"
    assert mode_line(Settings(understanding="cascade", llm=llm)).startswith("cascade (rules first, anthropic")


def test_a_question_with_choices_is_numbered_and_a_number_picks(tmp_path: Path) -> None:
    child = spawn(tmp_path, "--customer", "C-001")
    child.expect_exact("you> ")
    child.sendline("O-23456 was a disappointment")
    child.expect_exact("Did you mean: check an order's status, open a support ticket, or something else?")
    child.expect_exact("1) check an order's status")
    child.expect_exact("2) open a support ticket")
    child.expect_exact("3) something else")
    child.expect_exact("you> ")
    child.sendline("2")
    child.expect_exact("I've opened ticket T-")
    child.expect_exact('"O-23456 was a disappointment"')
    child.expect_exact("you> ")
    child.sendline("O-23456 was a disappointment")
    child.expect_exact("3) something else")
    child.sendline("3")
    child.expect_exact("Okay, none of those. Would you like me to loop in a human support agent?")
    child.expect_exact("you> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    with sqlite3.connect(tmp_path / "console.db") as db:
        assert db.execute("SELECT COUNT(*) FROM tickets").fetchone() == (1,)
        assert db.execute("SELECT COUNT(*) FROM handoffs").fetchone() == (0,)  # offered, not started
