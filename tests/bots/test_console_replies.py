"""A reply to the bot's own yes/no question in the console, through a pseudo-terminal: the
console has no buttons, so the typed answer is the whole of it. A "yes, but not now" runs
nothing and keeps the question open; a later yes with thanks runs the refund once; a no in other
words cancels."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pexpect

from tests.bots.test_console import spawn


def refunds(tmp_path: Path) -> list[tuple[str, float]]:
    with sqlite3.connect(tmp_path / "console.db") as db:
        return [tuple(r) for r in db.execute("SELECT order_id, amount FROM refunds")]


def test_not_now_holds_and_a_yes_with_thanks_runs_the_refund_once(tmp_path: Path) -> None:
    child = spawn(tmp_path, "--customer", "C-001")
    child.expect_exact("you> ")
    child.sendline("refund O-23456")
    child.expect_exact("Refund ฿3,290 for order O-23456? Please confirm or cancel.")
    child.expect_exact("you> ")
    child.sendline("sure, but not this week")
    child.expect_exact("No rush, nothing happens until you say so.")
    child.expect_exact("you> ")
    held = refunds(tmp_path)
    child.sendline("yep that's the one, thanks so much!")
    child.expect_exact("refunded ฿3,290 for order O-23456")
    child.expect_exact("you> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert held == []
    assert refunds(tmp_path) == [("O-23456", 3290.0)]


def test_a_no_in_other_words_cancels(tmp_path: Path) -> None:
    child = spawn(tmp_path, "--customer", "C-001")
    child.expect_exact("you> ")
    child.sendline("refund O-23456")
    child.expect_exact("Please confirm or cancel.")
    child.sendline("no, on second thought I'll hang on to it")
    child.expect_exact("I've cancelled that; nothing was changed.")
    child.expect_exact("you> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert refunds(tmp_path) == []


def test_thanks_alone_holds_and_thanks_with_a_question_runs_the_refund(tmp_path: Path) -> None:
    child = spawn(tmp_path, "--customer", "C-001")
    child.expect_exact("you> ")
    child.sendline("refund O-23456")
    child.expect_exact("Refund ฿3,290 for order O-23456? Please confirm or cancel.")
    child.expect_exact("you> ")
    child.sendline("much appreciated")
    child.expect_exact("Still waiting on your earlier request: Refund ฿3,290 for order O-23456?")
    child.expect_exact("you> ")
    held = refunds(tmp_path)
    child.sendline("many thanks. roughly when will the money land?")
    child.expect_exact("refunded ฿3,290 for order O-23456")
    child.expect_exact("you> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert held == []  # thanks alone may as well close the conversation: nothing ran on it
    assert refunds(tmp_path) == [("O-23456", 3290.0)]


def test_a_typed_change_is_asked_again_and_an_unsure_reply_runs_nothing(tmp_path: Path) -> None:
    child = spawn(tmp_path, "--customer", "C-001")
    child.expect_exact("you> ")
    child.sendline("refund O-23456")
    child.expect_exact("you> ")
    child.sendline("hmm, make it ฿2,500")
    child.expect_exact("Refund ฿2,500 for order O-23456? Please confirm or cancel.")
    child.expect_exact("you> ")
    child.sendline("yes. no. I really can't decide")
    child.expect_exact("nothing has been done yet")
    child.expect_exact("you> ")
    held = refunds(tmp_path)
    child.sendline("ok, yes, go ahead")
    child.expect_exact("refunded ฿2,500 for order O-23456")
    child.expect_exact("you> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert held == []
    assert refunds(tmp_path) == [("O-23456", 2500.0)]
