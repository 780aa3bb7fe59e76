"""Files generated from the code: langgraph.json, the README's method table, and the
documentation site's generated parts (docs/: the methods table and the method x env matrix of the
home page, the node table of the architecture page, each method's diagrams, prompts and options,
the CLI reference; introspect.reference makes the last three).

``python -m introspect.generated`` rewrites them; ``--check`` only says whether they are
stale (exit 1), which a test also asserts, so none can drift from the ``Method``
declarations, the compiled graphs, the prompts or the parser. In the README and in any page
under docs/ each generated part sits between ``<!-- generated: NAME [ARGUMENT] -->`` and
``<!-- end generated -->`` (``<!-- generated: graph laser -->``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from graphs import compiled, matrix_rows, methods, module_of, studio_graphs
from introspect import reference

if TYPE_CHECKING:
    from langchain_core.runnables.graph import Graph

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH_JSON = ROOT / "langgraph.json"
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def langgraph_json() -> str:
    """langgraph.json: every graph Studio serves, by file path as ``langgraph dev`` loads them."""
    graphs = {
        name: f"./{module_of(method).replace('.', '/')}.py:{attribute}"
        for name, (method, attribute) in studio_graphs().items()
    }
    return json.dumps({"dependencies": ["."], "graphs": graphs}, indent=2) + "\n"


def method_table() -> str:
    """The table of methods (README, docs home): what each is, its paper, its graph module and envs."""
    rows = ["| method | paper | graph | envs (the paper's own in bold) |", "|---|---|---|---|"]
    for method in methods():
        envs = ", ".join(f"**`{env}`**" if env in method.paper_envs else f"`{env}`" for env in method.envs)
        module = module_of(method).replace(".", "/")
        rows.append(f"| **{method.title}**: {method.summary} | {method.paper} | `{module}.py` | {envs} |")
    return "\n".join(rows)


def matrix_table() -> str:
    """The method x env matrix of the docs home (``introspect graphs --matrix`` prints the same)."""
    header, rows = matrix_rows()
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# The node names with one meaning in every graph (docs/architecture.md's vocabulary), in its order.
VOCABULARY = ("plan", "act", "remedy", "align", "complete", "describe", "map_element", "reflect", "execute")


def _drawings() -> dict[str, Graph]:
    return {name: compiled(method, attribute).get_graph() for name, (method, attribute) in studio_graphs().items()}


def node_table() -> str:
    """Which node each compiled graph has: the vocabulary first, then the graphs' own nodes."""
    drawings = _drawings()
    present = {name: {n for n in drawing.nodes if not n.startswith("__")} for name, drawing in drawings.items()}
    own = sorted(set().union(*present.values()) - set(VOCABULARY))
    rows = ["| node | " + " | ".join(f"`{name}`" for name in present) + " |", "|---|" + "---|" * len(present)]
    for node in (*VOCABULARY, *own):
        rows.append(f"| `{node}` | " + " | ".join("x" if node in nodes else "" for nodes in present.values()) + " |")
    return "\n".join(rows)


# section name -> what fills it; names after the first word are its arguments (a method's name)
SECTIONS: dict[str, Callable[..., str]] = {
    "methods": method_table,  # README, docs/index.md
    "matrix": matrix_table,  # docs/index.md
    "nodes": node_table,  # docs/architecture.md
    "graph": reference.diagrams,  # docs/methods
    "prompts": reference.prompts,
    "options": reference.options,  # docs/methods
    "cli": reference.cli_reference,  # docs/cli.md
}
_SECTION = re.compile(r"(<!-- generated: ([\w ]+?) -->\n)(.*?)(<!-- end generated -->)", re.DOTALL)


def refreshed(text: str) -> str:
    """``text`` with every generated section rewritten."""

    def fill(match: re.Match[str]) -> str:
        name, *arguments = match.group(2).split()
        if name not in SECTIONS:
            raise KeyError(f"unknown generated section {name!r}")
        return f"{match.group(1)}{SECTIONS[name](*arguments)}\n{match.group(4)}"

    return _SECTION.sub(fill, text)


def _pages() -> list[Path]:
    """The documentation pages with generated parts."""
    return sorted(p for p in DOCS.rglob("*.md") if "<!-- generated: " in p.read_text(encoding="utf-8"))


def _wanted() -> dict[Path, str]:
    wanted = {LANGGRAPH_JSON: langgraph_json()}
    for path in (README, *_pages()):
        wanted[path] = refreshed(path.read_text(encoding="utf-8"))
    return wanted


def stale() -> list[Path]:
    """The generated files that differ from what the code makes of them now."""
    return [path for path, text in _wanted().items() if path.read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m introspect.generated", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only report stale files (exit 1), write nothing")
    args = parser.parse_args(argv)
    wanted = _wanted()
    out_of_date = [path for path, text in wanted.items() if path.read_text(encoding="utf-8") != text]
    if args.check:
        for path in out_of_date:
            print(f"stale: {path.name} (run python -m introspect.generated)")
        return 1 if out_of_date else 0
    for path in out_of_date:
        path.write_text(wanted[path], encoding="utf-8")
        print(f"wrote {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
