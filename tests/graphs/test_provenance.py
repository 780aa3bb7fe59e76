"""Every results row says what produced it (introspect.provenance), and a finished row written
by other prompts or other code is not reused: ``eval`` says it is stale and runs its task again,
unless ``--keep-stale``. The method is a temporary copy of the ReAct method of
tests/support/react_method, installed by an ``introspect.methods`` entry point, whose prompt files and
graph module the tests edit as a user would (each edit is read when the method's module is
imported again, as by the next ``introspect`` command)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from introspect.cli import main
from introspect.provenance import PACKAGES, git_state
from tests.support.cli import ROOT
from tests.support.entry_points import install_methods
from tests.support.openai_stub import Reply
from tests.support.threads import Overlap
from tests.test_fifth_method import REPLIES, script


@pytest.fixture
def react(tmp_path, monkeypatch):
    """A copy of the ReAct method in ``tmp_path/reactcopy``, registered as ``react``."""
    shutil.copytree(ROOT / "tests" / "support" / "react_method", tmp_path / "reactcopy")
    install_methods(monkeypatch, tmp_path, react="reactcopy.graph")
    yield tmp_path / "reactcopy"
    for name in [m for m in sys.modules if m.split(".")[0] == "reactcopy"]:
        del sys.modules[name]


def edited(path: Path, old: str, new: str) -> None:
    """Edit one of the copy's files; the next command imports the method again."""
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    for name in [m for m in sys.modules if m.split(".")[0] == "reactcopy"]:
        del sys.modules[name]


def evaluate(capsys, results: Path, model: str, *extra: str) -> tuple[str, list[dict]]:
    code = main(["eval", "react", "--tasks", "synthetic-0", "--model", model, "--results", str(results), *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    return err, [json.loads(line) for line in results.read_text().splitlines()]


def test_a_row_records_what_produced_it_and_never_a_key(react, capsys, tmp_path, openai_stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-provenance-secret-0123456789")
    openai_stub.replies = [Reply(content=text) for text in REPLIES]
    results = tmp_path / "results.jsonl"
    err, rows = evaluate(capsys, results, "openai:stub-model", "--checkpoint", "memory")
    provenance = rows[0]["provenance"]
    commit, dirty = git_state()
    assert (provenance["commit"], provenance["dirty"]) == (commit, dirty)
    assert re.fullmatch(r"[0-9a-f]{40}", commit)  # the tests run from a checkout
    assert provenance["version"] == re.search(r'^version = "(.+)"', (ROOT / "pyproject.toml").read_text(), re.M)[1]
    assert provenance["python"] == ".".join(map(str, sys.version_info[:3]))
    assert set(provenance["packages"]) == set(PACKAGES) and provenance["packages"]["langgraph"]
    assert provenance["chromium"] is None  # WebShop drives no browser
    assert provenance["model"] == "openai:stub-model" and provenance["seeds"] == {}
    assert set(provenance["prompts"]) == {"react/step", "react/system"}
    assert re.fullmatch(r"[0-9a-f]{16}", provenance["code"])
    assert "sk-provenance-secret-0123456789" not in results.read_text()


def test_a_row_of_other_prompts_or_code_runs_again_unless_kept(react, capsys, tmp_path):
    results, model = tmp_path / "results.jsonl", script(tmp_path)
    _, rows = evaluate(capsys, results, model)
    first = rows[0]["provenance"]

    err, rows = evaluate(capsys, results, model)
    assert len(rows) == 1 and "stale" not in err  # unchanged: reused

    edited(react / "prompts" / "step.md", "The page now:", "The page as it is now:")
    err, rows = evaluate(capsys, results, model)
    assert (
        "stale: 1 finished row of react on webshop with "
        f"{model}: prompts changed (react/step): running them again (--keep-stale keeps them)"
    ) in err
    assert len(rows) == 2 and not rows[1].get("from_checkpoint") and rows[1]["success"]  # run again, from the start
    assert rows[1]["provenance"]["prompts"]["react/step"] != first["prompts"]["react/step"]
    assert rows[1]["provenance"]["code"] == first["code"]

    narrate = "def narrate(node: str, update: dict[str, Any]) -> str | None:\n"
    edited(react / "graph.py", narrate, narrate + '    """One line per thought."""  # and a comment\n')
    err, rows = evaluate(capsys, results, model)
    assert len(rows) == 2 and "stale" not in err  # a docstring or a comment is not code

    edited(react / "graph.py", 'if node == "think" else None', 'if node in ("think",) else None')
    err, rows = evaluate(capsys, results, model, "--keep-stale")
    assert f"stale: 1 finished row of react on webshop with {model}: code changed: kept (--keep-stale)" in err
    assert len(rows) == 2  # kept: nothing ran

    err, rows = evaluate(capsys, results, model)
    assert "code changed: running them again" in err and len(rows) == 3
    assert rows[2]["provenance"]["code"] != first["code"]


def test_rows_written_before_provenance_are_reused_with_a_note(react, capsys, tmp_path):
    results, model = tmp_path / "results.jsonl", script(tmp_path)
    _, rows = evaluate(capsys, results, model)
    del rows[0]["provenance"]
    results.write_text(json.dumps(rows[0]) + "\n")
    err, rows = evaluate(capsys, results, model)
    assert len(rows) == 1
    assert (
        f"note: 1 finished row of react on webshop with {model} carries no provenance "
        "(written before rows recorded it): reused as they are"
    ) in err


def test_outside_a_git_checkout_the_commit_is_unknown(monkeypatch, tmp_path):
    from introspect import provenance

    inside = tmp_path / "repo" / "site-packages"  # an installed copy inside another repository
    inside.mkdir(parents=True)
    git = ["git", "-C", str(tmp_path / "repo"), "-c", "user.name=a", "-c", "user.email=a@b"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "another project"], check=True)
    monkeypatch.setattr(provenance, "ROOT", inside)
    assert provenance.git_state() == ("unknown", None)


def test_a_browser_env_records_the_chromium_it_launches():
    import asyncio

    from graphs import method_named
    from introspect.provenance import provenance_of

    method = method_named("structured_reflection")
    recorded = asyncio.run(provenance_of(method, method.context(model="openai:gpt-4o-mini", env="miniwob")))
    assert re.search(r"\d+\.\d+\.\d+", recorded.chromium or ""), recorded.chromium
    assert "structured_reflection/reflect" in recorded.prompts


async def test_provenance_asked_together_parses_one_module_at_a_time(monkeypatch):
    """Ablation forks ask their provenance at once; CPython 3.11's parser is not safe in two
    threads at once (gh-106905), so every parse waits for the one before it. A parse here takes
    long enough that two unguarded ones would overlap."""
    import ast
    import asyncio

    from graphs import method_named
    from introspect.provenance import code_hash, provenance_of

    parse = Overlap(ast.parse)
    monkeypatch.setattr(ast, "parse", parse)
    method = method_named("laser")
    context = method.context(model="openai:gpt-4o-mini", env="webshop")
    recorded = await asyncio.gather(*(provenance_of(method, context) for _ in range(4)))
    assert parse.most == 1
    assert len({r.code for r in recorded}) == 1
    assert recorded[0].code != code_hash({})
