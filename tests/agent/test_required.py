"""What every match of a pattern holds, read from its text: what a reading finds, and that no text a
pattern matches ever lacks it (random patterns and texts)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from agent.understanding.required import ANY_DIGIT, required

DIGIT = frozenset({ANY_DIGIT})


def text(*pieces: str) -> frozenset[tuple[str, str]]:
    return frozenset(("text", p) for p in pieces)


@pytest.mark.parametrize(
    ("pattern", "needs"),
    [
        (r"\border\s*(\d{4,10})\b", [text("order"), DIGIT]),
        (r"(?:ticket|complaint)\s*[:#]", [text("ticket", "complaint"), text(":", "#")]),
        (r"colou?r", [text("colo"), text("r")]),  # an optional letter ends a run
        (r"ab+c{2}", [text("a"), text("b"), text("c")]),
        (r"[a-z]+\d", [DIGIT]),  # a range requires nothing known
        (r"[\d,.]x", [frozenset({ANY_DIGIT, ("text", ","), ("text", ".")}), text("x")]),
        (r"[^0-9]|\w+", []),
        (r"(?i)(?<![\w.])\$(?=\d)", [text("$"), DIGIT]),  # a lookahead's content is in the text
        (r"(?<!no )refund(?! policy)", [text("refund")]),
        (r"(?P<name>a)(?P=name)\1", [text("a")]),
        (r"\x41\u00e9\N{BULLET}\n", [text("A\u00e9"), text("\n")]),
        (r"\$\d+|\d+ (?:dollars|usd)", [DIGIT, text("$", "dollars", "usd")]),
        (r"a|", []),  # an empty branch matches anywhere
        (r"(?x) a b", []),  # verbose mode: not read
        (r"(a)?(?(1)b|c)", []),  # a conditional: not read
        (r"x{,3}y{2,}z{}", [text("y"), text("z{}")]),  # "{}" is literal text
    ],
)
def test_what_a_pattern_requires(pattern: str, needs: list[frozenset[tuple[str, str]]]) -> None:
    re.compile(pattern)  # a pattern Python reads
    assert required(pattern) == needs


ATOMS = ["a", "b", "ab", "ba", r"\d", "1", "[ab]", "[a-c]", r"[\d.]", r"\.", ".", r"\w", r"\b", "^", "$", "[^a]"]
ATOMS += [r"\x61", "-", "[-a]", "[]a]", r"\s", " "]
REPEATS = ["", "", "", "?", "*", "+", "{2}", "{0,2}", "{1,}", "+?", "??"]
GROUPS = ["(", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>", "(?i:"]


def random_pattern(rng: np.random.Generator, depth: int = 0) -> str:
    parts = []
    for _ in range(int(rng.integers(1, 4))):
        if depth < 2 and rng.random() < 0.3:
            branches = "|".join(random_pattern(rng, depth + 1) for _ in range(int(rng.integers(1, 4))))
            parts.append(str(rng.choice(GROUPS)) + branches + ")")
        else:
            parts.append(str(rng.choice(ATOMS)))
        parts[-1] += str(rng.choice(REPEATS))
    return "".join(parts)


@pytest.mark.parametrize("seed", range(10))
def test_no_text_a_random_pattern_matches_lacks_what_it_requires(seed: int) -> None:
    rng = np.random.default_rng(seed)
    alphabet = list("aAbBc1. -")
    checked = 0
    while checked < 300:
        pattern = random_pattern(rng)
        try:
            rx = re.compile(pattern, re.I)
        except re.error:  # a lookbehind of no fixed width, a repeat of a repeat
            continue
        needs = required(pattern)
        for _ in range(40):
            sample = "".join(rng.choice(alphabet, int(rng.integers(0, 9))))
            if rx.search(sample) is None:
                continue
            checked += 1
            has_digit = any(map(str.isdigit, sample))
            for need in needs:
                held = [p for kind, p in need if (has_digit if kind == "digit" else p.lower() in sample.lower())]
                assert held, (pattern, sample, need)
