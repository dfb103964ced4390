"""`math_evaluate`: arithmetic on a parsed expression tree. Never `eval`: only a whitelist of nodes runs."""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from typing import Any

from pydantic import Field

from agent.domain.contexts import ToolContext
from agent.errors import ToolError
from agent.tools.registry import ToolOutput, ToolParams, tool

MAX_CHARS = 200
MAX_EXPONENT = 100
MAX_MAGNITUDE = 1e100
MAX_NODES = 100
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
}


class MathParams(ToolParams):
    # The schema caps the length too, but the handler re-checks so a direct call gets the same error.
    expression: str = Field(min_length=1, description="Arithmetic like (1290 + 2490) * 0.93")


def _fail(message: str, code: str = "invalid_expression") -> ToolError:
    return ToolError("math_evaluate", message, code=code)


def evaluate(expression: str) -> float | int:
    """The value of an arithmetic expression; raises ToolError (with a reason) for anything else."""
    if len(expression) > MAX_CHARS:
        raise _fail(f"expression is {len(expression)} characters; the limit is {MAX_CHARS}", "too_long")
    # "1,290" is a thousands separator; the comma in "max(1, 2)" separates arguments.
    text = _THOUSANDS.sub("", expression).replace("^", "**").replace("×", "*").replace("÷", "/")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise _fail("not an arithmetic expression") from e
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise _fail(f"expression has more than {MAX_NODES} parts", "too_long")
    return _eval(tree.body)


def _eval(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise _fail(f"exponent {right} is larger than {MAX_EXPONENT}", "too_large")
        try:
            value = _BINARY[type(node.op)](left, right)
        except ZeroDivisionError as e:
            raise _fail("division by zero") from e
        except (OverflowError, ValueError) as e:
            raise _fail("the result is out of range", "too_large") from e
        if isinstance(value, complex):
            raise _fail("the result is not a real number")
        if abs(value) > MAX_MAGNITUDE:
            raise _fail("the result is too large", "too_large")
        return value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
        and 0 < len(node.args) <= 10
    ):
        try:
            return _FUNCTIONS[node.func.id](*(_eval(a) for a in node.args))
        except (ValueError, TypeError) as e:
            raise _fail(f"{node.func.id}: {e}") from e
    raise _fail(
        f"{type(node).__name__.lower()} is not allowed; only numbers, + - * / // % ** and {', '.join(_FUNCTIONS)}"
    )


@tool("Evaluate arithmetic safely (no variables, no names).")
async def math_evaluate(p: MathParams, ctx: ToolContext) -> ToolOutput:
    value = evaluate(p.expression)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return ToolOutput(data={"expression": p.expression, "value": value})
