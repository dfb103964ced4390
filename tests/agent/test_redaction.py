"""What the redactor masks in every string the bot writes down, and what it leaves for people to read."""

from __future__ import annotations

import pytest

from agent.redaction import Redactor

JWT = "eyJhbGciOiJIUzI1NiJ9x.eyJzdWIiOiIxMjM0NSJ9.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV"


@pytest.mark.parametrize(
    ("text", "masked", "gone"),
    [
        ("mail me at bob.smith+shop@example.co.uk today", "mail me at [email] today", "bob.smith"),
        ("call +1 (555) 123-4567 after six", "call [phone] after six", "4567"),
        ("my card 4111 1111 1111 1111 was charged", "my card [card] was charged", "4111"),
        ("key sk-ant-api03-abcdefghijklmnopqrstuv in the logs", "key [secret] in the logs", "abcdefgh"),
        (f"token {JWT} expired", "token [secret] expired", "SflKxw"),
        (f"--{JWT}--", "[secret]--", "SflKxw"),
        ("header: Bearer abcdef123456.ghijkl", "header: [secret]", "abcdef"),
    ],
)
def test_personal_data_and_secrets_are_masked(text: str, masked: str, gone: str) -> None:
    out = Redactor().text(text)
    assert out == masked and gone not in out


@pytest.mark.parametrize(
    "text",
    [
        "where is O-12345? it was 1,299 baht",
        "release 2.4.1 on 2026-11-23",
        "commit 3f9a2c7e1b4d5f6a7b8c9d0e1f2a3b4c5d6e7f80",  # a hex digest mixes no case
        "ticket T-920CD642 for the user U024BE7LH",
        "my email is broken, at home since 5 pm",
    ],
)
def test_ids_and_plain_words_survive(text: str) -> None:
    assert Redactor().text(text) == text


def test_a_value_at_the_end_of_a_long_run_is_still_found() -> None:
    """A pasted blob: tens of thousands of characters without a space, then an address or a token.
    The patterns start only where a run starts, so the scan is one pass over the run (tried at
    every position, it took minutes for a 70,000-character trace line)."""
    blob = "x" * 40_000
    assert Redactor().text(f"{blob}bob@example.com") == "[email]"
    dashed = "a-" * 20_000
    assert Redactor().text(f"{dashed} {JWT}") == f"{dashed} [secret]"
    assert Redactor().text(f"{dashed}{JWT}") == "[secret]"
    assert Redactor().text(blob) == blob


def test_a_known_secret_is_masked_whatever_its_shape() -> None:
    redactor = Redactor(secrets=["hunter2-pass"])
    assert redactor.text("the password is hunter2-pass.") == "the password is [secret]."
    assert redactor.known("reach me at bob@example.com, hunter2-pass") == "reach me at bob@example.com, [secret]"
