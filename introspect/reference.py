"""Reference text generated from the code for the documentation site (docs/): the CLI reference
from the argparse parser, each method's graph as Mermaid from its compiled graph, its prompts
from its declared prompt folder, its settings from its Context class's field metadata.
introspect.generated writes these into the pages' generated sections and fails the tests
when a page is stale, so the site cannot drift from the code.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import Field

from graphs import compiled, method_named


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _subcommands(parser: argparse.ArgumentParser, prefix: str) -> list[tuple[str, argparse.ArgumentParser, str]]:
    """(command line, parser, help) of every leaf command under ``parser``, in the parser's order."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                line = f"{prefix} {name}"
                nested = _subcommands(sub, line)
                out += nested or [(line, sub, helps.get(name, ""))]
    return out


def _argument(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`" + (" ..." if action.nargs in ("+", "*") else "")
    names = action.metavar if isinstance(action.metavar, tuple) else (action.metavar or action.dest.upper(),)
    takes = "" if action.nargs == 0 else "".join(f" {name}" for name in names)  # --compare A B
    return ", ".join(f"`{flag}{takes}`" for flag in action.option_strings)


def cli_reference() -> str:
    """Every ``introspect`` command with its arguments, from the parser itself."""
    from introspect.cli import build_parser

    out = []
    for line, parser, summary in _subcommands(build_parser(), "introspect"):
        out += [
            f"## `{line}`",
            "",
            f"{summary[:1].upper()}{summary[1:]}." if summary else "",
            "",
            "| argument | what it is | default |",
            "|---|---|---|",
        ]
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            default = "" if action.default in (None, False, argparse.SUPPRESS) else f"`{action.default}`"
            repeat = " (repeatable)" if isinstance(action, argparse._AppendAction) else ""
            out.append(f"| {_argument(action)} | {_cell(action.help or '')}{repeat} | {default} |")
        out.append("")
    return "\n".join(out).rstrip()


def diagrams(method: str) -> str:
    """The compiled graphs of ``method`` (the ones Studio serves) as LangGraph draws them."""
    declared = method_named(method)
    out = []
    for name, attribute in declared.studio_graphs.items():
        drawing = compiled(declared, attribute).get_graph()
        out += [f"`{name}`:", "", "```mermaid", drawing.draw_mermaid().strip(), "```", ""]
    return "\n".join(out).rstrip()


def prompts(method: str) -> str:
    """Every prompt of ``method``'s declared folder (``Method.prompts``), folded, as the model
    receives it (placeholders in braces)."""
    templates = method_named(method).prompts
    if templates is None:
        return ""
    out = []
    for name in templates.names():
        body = "\n".join(f"    {line}".rstrip() for line in templates.load(name).strip().splitlines())
        out += [f'??? note "`{name}`"', "", "    ```text", body, "    ```", ""]
    return "\n".join(out).rstrip()


def _type(field: Field) -> str:
    text = str(field.type)
    choices = re.fullmatch(r"Literal\[(.*)\]", text)
    if choices:
        names = [c.strip().strip("'\"") for c in choices.group(1).split(",")]
        return " \\| ".join(f"`{name}`" for name in names)
    return f"`{text}`".replace("|", "\\|")


def options(method: str) -> str:
    """The method's own settings (its Context class's fields beyond the shared ones), each
    with its type, default (the paper setting's) and description."""
    settings = method_named(method).context
    rows = ["| `--set` field | type | default | what it does |", "|---|---|---|---|"]
    for field in settings.own_fields():
        description = str(field.metadata.get("description", ""))
        default = settings.default(field.name)
        rows.append(f"| `{field.name}` | {_type(field)} | `{json.dumps(default)}` | {_cell(description)} |")
    return "\n".join(rows)
