"""What every match of a regular expression holds, read from the pattern's text.

A slot's pattern is tried on every message, and most cannot match a message without a digit, a
keyword or a quote, which most messages lack: `slots.Pattern` checks for those pieces first. They
are read here from the pattern as written, in the syntax of Python's `re`. The reading is
deliberately cautious: a construct it does not know (a character range, `\\w`, a backreference, a
conditional, verbose mode) counts as requiring nothing, so a check it derives can only be weaker
than the pattern, never stricter. What it finds for each part:

- a run of literal characters: that text; `\\d` or a class of digits and literal characters: one of them;
- a group or a positive lookaround: what its content requires; a branch: one piece from each branch;
- an optional part (`?`, `*`, `{0,n}`), a negative lookaround, `.`, `\\w`, anchors: nothing.
"""

from __future__ import annotations

import re

# One set of pieces, of which every text the pattern matches holds at least one (in any case): a
# piece is ("text", a run of literal characters) or ANY_DIGIT.
Needed = frozenset[tuple[str, str]]
ANY_DIGIT = ("digit", "")

_COUNTS = re.compile(r"\{(\d*)(,(\d*))?\}")
_FLAGS = tuple("aiLmsux-")  # of an inline flags group: (?i) or (?i:...)
_HEX = {"x": 2, "u": 4, "U": 8}
# Escapes that stand for one character (outside a class; `\b` is a word boundary there).
_CONTROL = {"a": "\a", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


class _Unknown(Exception):
    """A construct the reading does not follow: the whole pattern then requires nothing known."""


def required(pattern: str) -> list[Needed]:
    """The sets of pieces every text `pattern` matches holds one of each; empty when nothing is known."""
    reader = _Reader(pattern)
    try:
        branches = reader.alternation()
        if reader.at != len(pattern):  # a ")" with no "(": not a pattern `re` compiles
            raise _Unknown(pattern)
    except _Unknown:
        return []
    return list(dict.fromkeys(_either(branches)))


def surest(needs: list[Needed]) -> Needed:
    """The set to check first: a digit is the cheapest check and the one most chat messages fail;
    else the set whose shortest piece is longest, then the smallest."""
    return max(needs, key=lambda f: (f == {ANY_DIGIT}, min(len(v) or 1 for _, v in f), -len(f)))


def _either(branches: list[list[Needed]]) -> list[Needed]:
    """What a text one of `branches` matches holds: one set from each branch makes one, the surest
    of each; where every branch also needs some text, those make another (a text with a digit
    still needs "$" or "dollars" for a money pattern)."""
    if len(branches) == 1:
        return branches[0]
    if not all(branches):
        return []
    needs = [frozenset().union(*map(surest, branches))]
    texts = [[f for f in b if ANY_DIGIT not in f] for b in branches]
    if all(texts):
        needs.append(frozenset().union(*map(surest, texts)))
    return needs


def _text(run: list[str]) -> Needed:
    return frozenset({("text", "".join(run))})


class _Reader:
    """Reads a pattern from left to right; `at` is the position of the next character."""

    def __init__(self, pattern: str):
        self.pattern = pattern
        self.at = 0

    def _next(self) -> str:
        if self.at >= len(self.pattern):
            raise _Unknown("the pattern ends inside a construct")
        char = self.pattern[self.at]
        self.at += 1
        return char

    def _takes(self, prefix: str) -> bool:
        if self.pattern.startswith(prefix, self.at):
            self.at += len(prefix)
            return True
        return False

    def alternation(self) -> list[list[Needed]]:
        """Each branch's needs, up to the ")" that closes the group (not taken) or the end."""
        branches = [self.sequence()]
        while self._takes("|"):
            branches.append(self.sequence())
        return branches

    def sequence(self) -> list[Needed]:
        found: list[Needed] = []
        run: list[str] = []  # literal characters in a row make one piece of text
        while self.at < len(self.pattern) and self.pattern[self.at] not in "|)":
            item = self._item()
            fewest = self._repeats()
            if fewest == 0:
                item = []
            elif fewest is not None and isinstance(item, str):
                item = [_text([item])]  # "ab+" holds "a" and "b", not "ab"
            if isinstance(item, str):
                run.append(item)
                continue
            if run:
                found.append(_text(run))
                run = []
            found += item
        if run:
            found.append(_text(run))
        return found

    def _repeats(self) -> int | None:
        """The fewest times the item before is repeated (None: it is not a repeat)."""
        char = self.pattern[self.at] if self.at < len(self.pattern) else ""
        if char in ("?", "*", "+"):
            self.at += 1
            fewest = 1 if char == "+" else 0
        elif char == "{" and (counts := _COUNTS.match(self.pattern, self.at)) and (counts[1] or counts[2]):
            self.at = counts.end()
            fewest = int(counts[1] or 0)
        else:
            return None
        self._takes("?") or self._takes("+")  # lazy or possessive: the same fewest
        return fewest

    def _item(self) -> str | list[Needed]:
        """One literal character, or the needs of anything else."""
        char = self._next()
        if char == "(":
            return self._group()
        if char == "[":
            return self._class()
        if char == "\\":
            return self._escape(in_class=False)
        if char in ".^$":
            return []
        if char in "*+?":
            raise _Unknown("a repeat of nothing")
        return char

    def _group(self) -> list[Needed]:
        kind = ""
        if self._takes("?"):
            if self._takes("#"):  # a comment
                while self._next() != ")":
                    pass
                return []
            if self._takes("P="):  # a backreference by name
                while self._next() != ")":
                    pass
                return []
            for prefix in (":", "P<", "=", "!", "<=", "<!", ">"):
                if self._takes(prefix):
                    kind = prefix
                    break
            else:
                start = self.at
                while self.pattern[self.at : self.at + 1] in _FLAGS:
                    self.at += 1
                if "x" in self.pattern[start : self.at]:
                    raise _Unknown("verbose mode")  # its spaces and comments read otherwise
                if self._takes(")"):
                    return []  # flags for the whole pattern
                if not self._takes(":"):
                    raise _Unknown("a conditional or an unknown group")
            if kind == "P<":
                while self._next() != ">":
                    pass
        branches = self.alternation()
        if not self._takes(")"):
            raise _Unknown("a group without its )")
        return [] if kind in ("!", "<!") else _either(branches)

    def _class(self) -> list[Needed]:
        """A set of characters: one of its members when each is a literal character or `\\d`."""
        pieces: set[tuple[str, str]] = set()
        known = not self._takes("^")
        first = True
        while True:
            char = self._next()
            if char == "]" and not first:
                break
            first = False
            if char == "\\":
                member = self._escape(in_class=True)
                if isinstance(member, str):
                    pieces.add(("text", member))
                elif member == [frozenset({ANY_DIGIT})]:
                    pieces.add(ANY_DIGIT)
                else:
                    known = False
            elif char == "-" and pieces and self.pattern[self.at : self.at + 1] != "]":
                known = False  # a range
            else:
                pieces.add(("text", char))
        return [frozenset(pieces)] if known and pieces else []

    def _escape(self, in_class: bool) -> str | list[Needed]:
        char = self._next()
        if char == "d":
            return [frozenset({ANY_DIGIT})]
        if char in _HEX:
            digits = self.pattern[self.at : self.at + _HEX[char]]
            self.at += _HEX[char]
            try:
                return chr(int(digits, 16))
            except ValueError as e:
                raise _Unknown(digits) from e
        if char in _CONTROL:
            return _CONTROL[char]
        if not (char.isascii() and char.isalnum()):
            return char  # "\." or "\$": the character itself
        if char == "N" and self._takes("{"):
            while self._next() != "}":
                pass
        elif char.isdigit():  # a backreference or an octal character
            while self.at < len(self.pattern) and self.pattern[self.at].isdigit():
                self.at += 1
        return []  # a category, a boundary or a reference: nothing known (in a class: the class)
