"""Test doubles stay under tests/: nothing in the shipped packages is a fake, a script or a collector.

A double in the wheel invites a caller to wire it in production and hides which parts are real. The
packaging test (tests/test_wheel.py) checks that tests/ stays out of the wheel; this quick check reads
the shipped packages with `ast`, so a double moved back in fails without building anything.
"""

from __future__ import annotations

import ast
import re

from tests.test_import_cycles import project_modules

# The names test doubles go by in this tree and in the libraries it follows (unittest.mock, pytest).
DOUBLE = re.compile(r"^(Scripted|Collecting|Fake|Stub|Dummy|Mock|Canned)[A-Z]")


def test_no_test_double_class_ships() -> None:
    found = []
    for name, path in project_modules().items():
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ClassDef) and DOUBLE.match(node.name):
                found.append(f"{name}.{node.name}")
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tests":
                found.append(f"{name} imports {node.module}")
    assert not found, f"test doubles belong under tests/: {found}"
