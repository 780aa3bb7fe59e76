"""``introspect graphs``: the graphs Studio serves, their diagrams, the method x env matrix."""

from __future__ import annotations

import argparse
import json

from graphs import compiled, studio_graphs
from introspect.commands.command import Command
from introspect.console import matrix_text


def cmd_graphs(args: argparse.Namespace) -> int:
    """Every graph Studio serves (langgraph.json), with its nodes, envs and defaults; or, with
    ``--matrix``, every method x env cell that runs."""
    if args.matrix:
        print(matrix_text())
        return 0
    for name, (method, attribute) in studio_graphs().items():
        drawing = compiled(method, attribute).get_graph()
        nodes = [n for n in drawing.nodes if not n.startswith("__")]
        own = ", ".join(f"{f.name}={json.dumps(method.context.default(f.name))}" for f in method.context.own_fields())
        print(f"{name}  envs: {', '.join(method.graph_envs(name))}  nodes: {', '.join(nodes)}  settings: {own}")
        if args.mermaid:
            print(drawing.draw_mermaid())
    return 0


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mermaid", action="store_true")
    parser.add_argument(
        "--matrix", action="store_true", help="every method x env cell that runs; 'paper' marks the paper's own setting"
    )


COMMAND = Command(
    "graphs",
    "list the graphs; --mermaid prints their diagrams, --matrix the method x env matrix",
    arguments,
    cmd_graphs,
)
