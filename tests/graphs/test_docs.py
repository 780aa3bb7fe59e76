"""The documentation site's generated parts (introspect.generated, introspect.reference) are
current, and a stale one is found: a method page's diagram, its prompts, the CLI reference, the
architecture page's node table, the home page's method x env matrix."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from graphs import METHODS
from introspect import generated, reference
from introspect.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def test_every_method_page_shows_its_compiled_graph_prompts_and_options():
    for method in METHODS:
        page = (ROOT / "docs" / "methods" / f"{method}.md").read_text()
        assert reference.diagrams(method) in page
        for prompt in (ROOT / "prompts" / method).rglob("*.md"):
            name = prompt.relative_to(ROOT / "prompts" / method).with_suffix("").as_posix()
            assert f'??? note "`{name}`"' in page, (method, name)
            assert prompt.read_text().strip().splitlines()[0].strip() in page
    assert (
        '| `planning` | `staged` \\| `iterative` | `"staged"` |'
        in (ROOT / "docs" / "methods" / "structured_reflection.md").read_text()
    )


def test_the_cli_reference_has_every_command_and_option_of_the_parser():
    page = (ROOT / "docs" / "cli.md").read_text()
    for command in ("run", "resume", "eval", "train", "report", "graphs", "webarena login", "demo"):
        assert f"## `introspect {command}`" in page
    assert "| `--markdown FILE` | also write the report as Markdown |" in page
    report = build_parser().parse_args(["report", "r.jsonl"])
    assert report.plots is None and report.training is None


@pytest.fixture
def docs(tmp_path, monkeypatch):
    """A copy of docs/ that generated.stale() and main() look at instead of the checkout's."""
    copy = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", copy)
    monkeypatch.setattr(generated, "DOCS", copy)
    return copy


@pytest.mark.parametrize(
    "page,old,new",
    [
        ("methods/laser.md", "item -. &nbsp;call&nbsp; .-> execute;", "item --> execute;"),  # a diagram
        ("methods/autoplan.md", "    ```\n", "    (an old line of a prompt)\n    ```\n"),  # a prompt
        ("cli.md", "| `--plots DIR` | write PNG figures into this folder |", "| `--plots DIR` | old help |"),
        ("architecture.md", "| `execute` | x | x | x | x |  |", "| `step` | x | x | x | x |  |"),  # node table
        ("index.md", "| LASER | paper |  | yes |", "| LASER | paper |  |  |"),  # the method x env matrix
    ],
)
def test_a_stale_page_is_reported_and_rewritten(docs, page, old, new):
    path = docs / page
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    assert generated.stale() == [path]
    assert generated.main(["--check"]) == 1
    assert generated.main([]) == 0 and generated.stale() == []
    assert path.read_text() == text
