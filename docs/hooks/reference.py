"""MkDocs hook: the reference pages are drawn from the code at build time, never kept by hand.

A page asks for a table with a marker line of its own, replaced as the page is read:

    <!-- reference: env -->                 every environment variable (bots/settings.py)
    <!-- reference: file settings.yaml -->  a config file's fields, from its pydantic model
    <!-- reference: cli -->                 every `agentbot` command, from its argparse parser
    <!-- reference: api bots.app.build_app -->  a public function, class or model: signature and Args

A marker this hook does not know fails the build, and so does a model it cannot render.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import io
import json
import re
import textwrap
import tokenize
import types
import typing
from typing import Any

from mkdocs.exceptions import PluginError
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

MARKER = re.compile(r"^<!-- reference: (?P<what>[a-z]+)(?: (?P<arg>\S+))? -->$", re.MULTILINE)
ARG = re.compile(r"^    (?P<name>\*{0,2}\w+): (?P<text>.*)$")


def config_files() -> dict[str, type[BaseModel]]:
    """Each file in a project's `config/` folder and the model it loads into."""
    from agent.config.schema import AgentsFile, IntentsFile, Settings
    from agent.domain.catalog import StoreSettings
    from agent.planners.release_risk import RiskThresholds
    from agent.policy.rules import PolicyFile
    from agent.understanding.banks import BankFile, NluBanks

    return {
        "settings.yaml": Settings,
        "store.yaml": StoreSettings,
        "agents.yaml": AgentsFile,
        "intents.yaml": IntentsFile,
        "nlu.yaml": NluBanks,
        "banks/*.yaml": BankFile,
        "policies.yaml": PolicyFile,
        "release_risk.yaml": RiskThresholds,
    }


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    def expand(match: re.Match[str]) -> str:
        what, arg = match["what"], match["arg"]
        if what == "env":
            return env_table()
        if what == "cli":
            from bots.cli.main import parser

            return cli_reference(parser())
        if what == "api" and arg:
            return api_reference(arg)
        if what == "file":
            models = config_files()
            if arg not in models:
                raise PluginError(f"{page.file.src_path}: no model for config file {arg!r}; known: {sorted(models)}")
            return file_reference(arg, models[arg])
        raise PluginError(f"{page.file.src_path}: unknown reference marker {match[0]!r}")

    return MARKER.sub(expand, markdown)


# --- environment variables -------------------------------------------------------------------------


def env_table() -> str:
    from bots.settings import declared, is_secret

    out: list[str] = []
    current = ""
    for group, name, field in declared():
        if group != current:
            current = group
            out += ["", f"**{group}**", "", "| variable | type | default | what it does |", "| --- | --- | --- | --- |"]
        secret = " (**secret**: masked in everything agentbot writes)" if is_secret(field) else ""
        kind = "secret" if is_secret(field) else type_name(field.annotation, lambda m: m.__name__)
        kind = kind.replace(" \\| null", "").replace("Path", "path")  # unset is always allowed
        default = "" if field.default is None else default_cell(field)
        out.append(f"| `{name}` | {kind} | {default} | {cell(field.description or '')}{secret} |")
    return "\n".join(out).strip() + "\n"


# --- config files ----------------------------------------------------------------------------------


def file_reference(filename: str, model: type[BaseModel]) -> str:
    """A table for the file's top level, then one for each nested table, named by its YAML path."""
    sections: list[tuple[str, type[BaseModel]]] = []
    seen: dict[type[BaseModel], str] = {}

    def visit(path: str, m: type[BaseModel]) -> None:  # depth first, so a nested table follows its parent
        seen[m] = path
        sections.append((path, m))
        for name, field in m.model_fields.items():
            for suffix, nested in nested_models(field.annotation):
                if nested not in seen:
                    visit(f"{path}.{yaml_name(name, field)}{suffix}".lstrip("."), nested)

    visit("", model)
    out: list[str] = []
    for path, m in sections:
        if path:
            out += [f"#### `{path}` {{#{anchor(filename, path)}}}", ""]
        if doc := own_doc(m):
            out += [" ".join(doc.split("\n\n")[0].split()), ""]
        out += model_table(filename, m, seen)
        out.append("")
    return "\n".join(out)


def own_doc(obj: type) -> str:
    """The object's own docstring, not one it inherits (pydantic's BaseModel has a long one)."""
    doc = obj.__dict__.get("__doc__")
    return inspect.cleandoc(doc) if doc and doc != BaseModel.__doc__ else ""


def model_table(filename: str, model: type[BaseModel], seen: dict[type[BaseModel], str]) -> list[str]:
    comments = field_comments(model)
    rows = ["| key | type | default | what it is |", "| --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        key = yaml_name(name, field)
        about = field.description or comments.get(name, "")
        if not about and len(nested := nested_models(field.annotation)) == 1:
            about = own_doc(nested[0][1]).split("\n\n")[0]  # a table's field: what the table is
        rows.append(
            f"| `{key}` | {type_cell(field.annotation, filename, seen)} | {default_cell(field)} | {cell(about)} |"
        )
    return rows


def nested_models(annotation: Any) -> list[tuple[str, type[BaseModel]]]:
    """The models inside a field's type, with the YAML path step that reaches each."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [("", annotation)]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (list, tuple, set, frozenset):
        return [(f"[]{s}", m) for a in args for s, m in nested_models(a)]
    if origin is dict and len(args) == 2:
        return [(f".<key>{s}", m) for s, m in nested_models(args[1])]
    return [pair for a in args for pair in nested_models(a)]


def type_cell(annotation: Any, filename: str, seen: dict[type[BaseModel], str]) -> str:
    return type_name(annotation, lambda m: f"[table](#{anchor(filename, seen[m])})" if m in seen else m.__name__)


def type_name(annotation: Any, model_name: Any) -> str:
    if annotation is type(None):
        return "null"
    if annotation is typing.Any:
        return "any value"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return str(model_name(annotation))
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f"`{json.dumps(a)}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(type_name(a, model_name) for a in args)
    if origin is typing.Annotated:
        return type_name(args[0], model_name)
    if origin in (list, tuple, set, frozenset):
        return f"list of {type_name(args[0], model_name)}" if args else "list"
    if origin is dict:
        return f"map of {type_name(args[0], model_name)} to {type_name(args[1], model_name)}" if args else "map"
    names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if annotation in names:
        return names[annotation]
    return getattr(annotation, "__name__", str(annotation))


def default_cell(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
    elif field.default is PydanticUndefined:
        return ""
    else:
        value = field.default
    if isinstance(value, BaseModel):
        return "(its table's defaults)" if value == type(value)() else "(see the file)"
    if value in ({}, []):
        return "empty"
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > 60:
        return "(long: see the shipped file)"
    return f"`{text}`"


def yaml_name(name: str, field: FieldInfo) -> str:
    return field.alias or name


def anchor(filename: str, path: str) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", filename.lower()).strip("-")
    return f"{base}-{re.sub(r'[^a-z0-9]+', '-', path.lower()).strip('-')}" if path else base


def field_comments(model: type[BaseModel]) -> dict[str, str]:
    """The comments written beside or just above each field in the model's source: the house's way
    of saying what a field is for, read here so they are written once."""
    try:
        lines, _ = inspect.getsourcelines(model)
    except (OSError, TypeError):
        return {}
    source = textwrap.dedent("".join(lines))
    trailing: dict[int, str] = {}  # line number -> a comment after code on that line
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT and tok.line[: tok.start[1]].strip():
                trailing[tok.start[0]] = tok.string.lstrip("#").strip()
    except tokenize.TokenError:
        pass
    found: dict[str, str] = {}
    above: list[str] = []
    for number, line in enumerate(source.splitlines(), start=1):
        body = re.match(r"^    (?! )(.*)$", line)
        if not body:
            if not line.startswith("     "):
                above = []  # a blank line or the class line: a comment block above it belongs to nothing here
            continue
        text = body[1]
        if text.startswith("#"):
            above.append(text.lstrip("#").strip())
            continue
        field = re.match(r"^(\w+)\s*:", text)
        if field and field[1] in model.model_fields:
            found[field[1]] = " ".join([*above, trailing.get(number, "")]).strip()
        above = []
    return found


def cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


# --- the Python API ------------------------------------------------------------------------------


def api_reference(dotted: str) -> str:
    """A public object's signature and what its docstring says of each argument (or a model's fields)."""
    module_name, _, name = dotted.rpartition(".")
    obj = getattr(importlib.import_module(module_name), name)
    doc = own_doc(obj) if isinstance(obj, type) else inspect.getdoc(obj) or ""
    summary, args = split_docstring(doc)
    out = [f"#### `{name}`", ""]
    if isinstance(obj, type) and issubclass(obj, BaseModel):
        out += [summary, "", *model_table("api", obj, {})] if summary else model_table("api", obj, {})
        return "\n".join(out) + "\n"
    if isinstance(obj, type):  # a class: what it holds, as its docstring's Args say
        head = "| attribute | what it is |"
        out += [summary, ""] if summary else []
        out += [head, "| --- | --- |", *(f"| `{k}` | {cell(v)} |" for k, v in args), ""] if args else []
        return "\n".join(out)
    try:
        signature = inspect.signature(obj, eval_str=True)
    except (NameError, TypeError):
        signature = inspect.signature(obj)
    params = ",\n".join(f"    {p}" for p in signature.parameters.values()).replace("'", "")
    params = re.sub(r"\b(?:[a-z_]\w*\.)+(\w+)", r"\1", params)  # agent.app.App -> App
    returns = signature.return_annotation
    arrow = "" if returns is inspect.Signature.empty else f" -> {getattr(returns, '__name__', returns)}"
    out += ["```python", f"{name}(\n{params},\n){arrow}", "```", ""]
    if summary:
        out += [summary, ""]
    if args:
        out += ["| argument | what it is |", "| --- | --- |", *(f"| `{k}` | {cell(v)} |" for k, v in args), ""]
    return "\n".join(out)


def split_docstring(doc: str) -> tuple[str, list[tuple[str, str]]]:
    """A Google-style docstring's text before `Args:`, and each argument with its description."""
    text, _, rest = doc.partition("Args:")
    args: list[tuple[str, str]] = []
    for line in rest.splitlines():
        if match := ARG.match(line):
            args.append((match["name"], match["text"]))
        elif line.startswith("        ") and args:
            args[-1] = (args[-1][0], f"{args[-1][1]} {line.strip()}")
        elif line.strip() and not line.startswith(" "):
            break
    return " ".join(text.split()), args


# --- the command line ------------------------------------------------------------------------------


def cli_reference(root: argparse.ArgumentParser) -> str:
    out: list[str] = []
    for name, command, about in subcommands(root, "agentbot"):
        out += [f"### `{name}`", ""]
        if about:
            out += [cell(about[0].upper() + about[1:]) + ".", ""]
        formatter = argparse.HelpFormatter(command.prog, width=100)
        formatter.add_usage(command.usage, command._actions, command._mutually_exclusive_groups)
        usage = textwrap.dedent(formatter.format_help().strip().removeprefix("usage: "))
        out += ["```", usage, "```", ""]
        rows = [option_row(a) for a in command._actions if not isinstance(a, argparse._SubParsersAction)]
        rows = [r for r in rows if r]
        if rows:
            out += ["| argument | default | what it does |", "| --- | --- | --- |", *rows, ""]
    return "\n".join(out)


def subcommands(parser: argparse.ArgumentParser, name: str) -> list[tuple[str, argparse.ArgumentParser, str]]:
    found: list[tuple[str, argparse.ArgumentParser, str]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for sub_name, sub in action.choices.items():
                found.append((f"{name} {sub_name}", sub, helps.get(sub_name, "")))
                found += subcommands(sub, f"{name} {sub_name}")
    return found


def option_row(action: argparse.Action) -> str:
    if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
        return ""
    flags = ", ".join(f"`{o}`" for o in action.option_strings) or f"`{action.metavar or action.dest}`"
    if action.choices:
        flags += " (" + " \\| ".join(f"`{c}`" for c in action.choices) + ")"
    default = f"`{action.default}`" if action.default not in (None, False, argparse.SUPPRESS) else ""
    return f"| {flags} | {default} | {cell(action.help or '')} |"
