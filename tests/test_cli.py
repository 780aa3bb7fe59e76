"""The ``introspect`` command: one-line errors with exit 2, listing graphs, the offline demo,
and an evaluation through the real ChatOpenAI client that resumes and never leaks the key."""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import re
import subprocess
import sys

import pytest

import introspect.commands
from graphs import METHODS
from introspect import cli
from introspect.cli import main
from tests.support.cli import run_cli
from tests.support.laser_demo import DEMO, REPLIES, ROOT, demo_replies
from tests.support.openai_stub import OpenAIStub


@pytest.mark.parametrize(
    "args,message",
    [
        (["run", "nope", "--task", "1", "--model", "openai:x"], "unknown method 'nope'"),
        (["run", "laser"], "run needs --task ID"),
        (["run", "laser", "--env", "miniwob", "--task", "1"], "laser runs on webshop"),
        (
            ["run", "laser", "--task", "99999", "--model", "scripted:introspect/demos/laser.jsonl"],
            "unknown webshop task '99999'",
        ),
        (["run", "laser", "--task", "1", "--model", "gpt-4o"], "malformed model spec"),
        (["run", "laser", "--task", "1", "--model", "scripted:/no/such.jsonl"], "script file not found"),
        (["run", "laser", "--task", "1", "--model", "openai:gpt-4o-mini"], "no OpenAI key"),
        (
            ["run", "laser", "--task", "1", "--set", "colour=red"],
            "laser has no setting 'colour'; its settings: argument_enums, backtracking, backup, backup_check",
        ),
        (["resume", "no-such-thread", "--checkpoint", "memory"], "no checkpointed thread"),
        (
            [
                "run",
                "laser",
                "--task",
                "1",
                "--checkpoint",
                "redis://x",
                "--model",
                "scripted:introspect/demos/laser.jsonl",
            ],
            "unknown checkpointer",
        ),
        (
            ["eval", "laser", "--tasks", "1,nope", "--model", "scripted:introspect/demos/laser.jsonl"],
            "unknown webshop task 'nope'",
        ),
        (
            [
                "eval",
                "sr",
                "--split",
                "paper-43@5:2",
                "--model",
                "scripted:introspect/demos/structured_reflection.jsonl",
            ],
            "bad seed range in miniwob split 'paper-43@5:2'",
        ),
        (
            [
                "eval",
                "sr",
                "--split",
                "paper-43@0:x",
                "--model",
                "scripted:introspect/demos/structured_reflection.jsonl",
            ],
            "bad seed range",
        ),
    ],
)
def test_user_errors_are_one_line_and_exit_2(capsys, monkeypatch, args, message):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.chdir(ROOT)
    code, out, err = run_cli(capsys, *args)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_usage_errors_are_one_line_too(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--task", "1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "method" in err and len(err.strip().splitlines()) == 1


def test_every_command_is_one_module_registered_from_one_list():
    """One way to add a command: a module of introspect/commands named for it declares COMMAND,
    cli.COMMANDS lists it once, and nothing else adds a subcommand."""
    helpers = {"arguments", "command"}  # the shared options and the Command type, not commands
    modules = sorted(m.name for m in pkgutil.iter_modules(introspect.commands.__path__) if m.name not in helpers)
    declared = {m: importlib.import_module(f"introspect.commands.{m}").COMMAND for m in modules}
    assert [m for m, command in declared.items() if command.name != m] == []
    listed = [command.name for command in cli.COMMANDS]
    assert sorted(listed) == modules and len(set(listed)) == len(listed)
    assert all(command is declared[command.name] for command in cli.COMMANDS)
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == listed
    app = ROOT / "introspect"
    strays = [
        str(path.relative_to(ROOT))
        for path in app.rglob("*.py")
        if ".add_parser(" in path.read_text(encoding="utf-8") and path != app / "cli.py"
    ]
    assert strays == []


def test_the_command_loads_without_the_graph_stack():
    """`introspect --help` must not import langchain or langgraph (most of a second, 41% of
    it langsmith): the commands import the graph stack when they run."""
    probe = (
        "import sys, introspect.cli; "
        "heavy = ('langchain_core', 'langgraph', 'langsmith', 'nodes.runtime.llm'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout
    shown = subprocess.run([sys.executable, "-m", "introspect.cli", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert shown.returncode == 0 and "run" in shown.stdout and "eval" in shown.stdout


def test_graphs_lists_laser_with_its_diagram(capsys):
    code, out, _ = run_cli(capsys, "graphs", "--mermaid")
    assert code == 0
    assert "laser  envs: webshop, webarena  nodes: start, search, results, item, execute, backup, finish" in out
    assert "results -. &nbsp;call&nbsp; .-> execute;" in out
    assert "execute -. &nbsp;select_item, Description, Reviews, Features or refused&nbsp; .-> item;" in out


def test_graphs_lists_every_graph_studio_serves(capsys):
    served = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    code, out, _ = run_cli(capsys, "graphs")
    listed = [line.split()[0] for line in out.splitlines() if "  envs: " in line]
    assert code == 0 and sorted(listed) == sorted(served)
    assert (
        "autoplan_training  envs: alfworld, hotpotqa  nodes: sample_batch, collect, score_batch, reflect, plan" in out
    )


@pytest.mark.parametrize(
    "name,shown",
    [
        ("laser", "-> click[Buy Now]  reward=1.00"),
        pytest.param(
            "structured_reflection",
            "trial 1 ended no change; reflection: For action index=1",
            marks=pytest.mark.browser,
        ),
        ("autoplan", "(refused: You are not at countertop 1.)"),
        pytest.param("devils_advocate", "element remapped: click [39] -> click [44]", marks=pytest.mark.browser),
    ],
)
def test_every_demo_runs_offline_and_succeeds(capsys, monkeypatch, name, shown):
    """Each demo replays its recording: every request the graph makes is checked against the
    recorded one, and the run ends as it ended when recorded, with every recorded call made."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, _ = run_cli(capsys, "demo", name)
    assert code == 0
    assert shown in out
    recorded = (ROOT / "introspect/demos" / f"{name}.jsonl").read_text().splitlines()
    assert "finished: success=True reward=1.000 " in out and f" model_calls={len(recorded)} " in out


@pytest.mark.browser
def test_the_devils_advocate_demo_backtracks_and_remaps_on_the_changed_page(capsys, monkeypatch):
    """The shipped script names plain element ids: they hold because ids follow the page's tree. The
    first click is wrong, the remedy is tried after going back home, where the shop now lists the
    viewed frame first, so the remedy's element is remapped with the paper's prompt."""
    from nodes.runtime.llm import model_for

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, _ = run_cli(capsys, "demo", "devils_advocate")
    assert code == 0 and "finished: success=True reward=1.000 steps=2 model_calls=11" in out
    assert "-> click [36]  reward=0.00" in out and "not aligned: backtrack" in out
    assert re.search(r"backtrack +back to http://127\.0\.0\.1:\d+/ to try click \[39\]", out)
    recording = ROOT / "introspect/demos/devils_advocate.jsonl"
    [mapping] = [
        c["request"]["messages"][0]["content"]
        for c in model_for(f"replay:{recording}", 1.0, 512).calls
        if c["request"]["messages"][0]["content"].startswith("I want to interact with an element")
    ]
    before, after = mapping.split("Now if I want to click on the same element")
    assert "[39] link 'Gallery Collage Picture Frame Set, 7 Frames'" in before
    assert (
        "[34] heading 'Recently Viewed'" in after and "[44] link 'Gallery Collage Picture Frame Set, 7 Frames'" in after
    )


def test_unknown_demo_is_a_user_error(capsys):
    code, _, err = run_cli(capsys, "demo", "nope")
    assert code == 2 and f"available: {', '.join(sorted(METHODS))}" in err  # one demo per method


@pytest.mark.browser
def test_eval_takes_a_seed_range_of_a_miniwob_split(capsys, tmp_path):
    """``--split TASKS@START:STOP`` runs those seeds only (click-test's button is id=3 in both)."""
    script = tmp_path / "click.jsonl"
    script.write_text(json.dumps({"content": "click id=3"}) + "\n")
    results = tmp_path / "results.jsonl"
    code, out, err = run_cli(
        capsys,
        "eval",
        "sr",
        "--split",
        "click-test@3:5",
        "--model",
        f"scripted:{script}",
        "--concurrency",
        "1",
        "--results",
        str(results),
        "--checkpoint",
        "memory",
    )
    assert code == 0, err
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert sorted(row["task_id"] for row in rows) == ["click-test/3", "click-test/4"]
    assert all(row["success"] for row in rows) and "success rate  100.0%" in out


def test_eval_through_chatopenai_resumes_and_keeps_the_key_out(capsys, monkeypatch, tmp_path):
    secret = "sk-do-not-leak-7f3a9c"
    monkeypatch.chdir(tmp_path)
    results = tmp_path / "results" / "laser-webshop-openai_gpt-4o-mini.jsonl"  # the default name
    db = tmp_path / "cp.sqlite"
    with OpenAIStub() as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", secret)
        stub.replies.extend(demo_replies())
        args = [
            "eval",
            "laser",
            "--env",
            "webshop",
            "--tasks",
            DEMO["task_id"],
            "--model",
            "openai:gpt-4o-mini",
            "--concurrency",
            "1",
            "--checkpoint",
            f"sqlite://{db}",
        ]
        code, out, err = run_cli(capsys, *args)
        assert code == 0, err
        assert f"results: {results.relative_to(tmp_path)}" in out
        assert "success rate  100.0%" in out and "mean reward   1.000" in out
        requests = len(stub.requests)
        assert requests == len(REPLIES)
        code, out_again, _ = run_cli(capsys, *args)  # finished tasks are skipped
        assert code == 0 and len(stub.requests) == requests
        assert "success rate  100.0%" in out_again
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["success"] is True and rows[0]["model_calls"] == len(REPLIES)
    assert rows[0]["input_tokens"] == len(REPLIES) * 11 and rows[0]["cost_usd"] > 0
    files = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]  # results, sqlite (+ wal)
    for blob in (*files, (out + err + out_again).encode()):
        assert secret.encode() not in blob


def test_train_crash_resume_and_eval_with_the_plan(capsys, tmp_path, monkeypatch):
    """AutoPlan through the CLI on the local HotpotQA corpus: training stops when the model
    fails before the plan update, `introspect resume` finishes it and writes the plans, and
    `eval --plan` runs with the learned plan."""
    from nodes.runtime import llm

    script = tmp_path / "train.jsonl"
    # both branches of the batch read the script in lockstep: thought, action, formalized
    # command; then the summary of each experience (no plan yet: HotpotQA asks for no flaws
    # and no revision); then the plan update
    lines = ["I should search.", "search[Scott Derrickson]", "search[Scott Derrickson]", "Summary: searched once."]
    script.write_text("".join(json.dumps({"content": line}) + "\n" for line in lines))
    plans = tmp_path / "plans" / "qa.json"
    common = [
        "--env",
        "hotpotqa",
        "--set",
        "judge=off",  # exact match: the original's GPT-4 judge needs a key
        "--env-option",
        "backend=local",
        "--model",
        f"scripted:{script}",
        "--checkpoint",
        f"sqlite:///{tmp_path / 'cp.sqlite'}",
    ]
    code, out, err = run_cli(
        capsys,
        "train",
        "autoplan",
        "--split",
        "train[:2]",
        "--batch",
        "2",
        "--iterations",
        "1",
        "--set",
        "max_actions=1",
        "--plan-out",
        str(plans),
        "--thread",
        "train-1",
        *common,
    )
    assert code == 1 and "4 replies" in err  # the plan update had no reply
    assert f"continue it with `introspect resume train-1 --checkpoint {common[-1]}`" in err
    assert not plans.exists()
    # the loop was shown as it happened: the batch, each experience, each reflection
    assert "iteration 1: batch of 2: " in out
    assert out.count("experience ") == 2 and "failure after 1 steps (max_actions)" in out
    assert "batch: 0/2 succeeded" in out
    assert out.count("reflection on ") == 2 and out.count("summary: Summary: searched once.") == 2
    assert "flaw:" not in out  # no plan yet: HotpotQA's Flaw prompt is not asked

    with script.open("a") as handle:
        handle.write(json.dumps({"content": "1. Search the entity.\n2. Answer with finish[answer]."}) + "\n")
    llm.clear_models()
    code, out, err = run_cli(capsys, "resume", "train-1", "--checkpoint", f"sqlite:///{tmp_path / 'cp.sqlite'}")
    assert code == 0, err
    assert "iteration 1: 0/2 tasks succeeded" in out and "2. Answer with finish[answer]." in out
    assert "plan updated (plan 1):" in out
    record = json.loads(plans.read_text())
    assert record["plans"] == ["", "1. Search the entity.\n2. Answer with finish[answer]."]
    assert plans.with_suffix(".txt").read_text().startswith("1. Search the entity.")

    answer = tmp_path / "answer.jsonl"
    answer.write_text(
        "".join(json.dumps({"content": c}) + "\n" for c in ["Both are American.", "finish[yes]", "finish[yes]"])
    )
    llm.clear_models()
    code, out, err = run_cli(
        capsys,
        "eval",
        "autoplan",
        "--env",
        "hotpotqa",
        "--tasks",
        "5a8b57f25542995d1e6f1371",
        "--plan",
        str(plans),
        "--set",
        "judge=off",
        "--model",
        f"scripted:{answer}",
        "--results",
        str(tmp_path / "r.jsonl"),
        "--checkpoint",
        "memory",
    )
    assert code == 0, err
    assert "success rate  100.0%" in out
    row = json.loads((tmp_path / "r.jsonl").read_text())
    assert row["with_plan"] is True and row["model_calls"] == 3
    calls = llm.model_for(f"scripted:{answer}", 0.0, 512).calls
    assert "2. Answer with finish[answer]." in "\n".join(str(m.content) for m in calls[0]["messages"])


def test_graphs_matrix_lists_every_runnable_cell_and_marks_the_papers_settings(capsys):
    """The matrix is the registry's: every Method.envs cell, "paper" where Method.paper_envs has it."""
    from graphs import matrix

    assert main(["graphs", "--matrix"]) == 0
    out = capsys.readouterr().out
    cells = matrix()
    assert f"{len(cells)} runnable method x env cells" in out
    header, *lines = out.splitlines()
    rows = {line.split("  ")[0]: line for line in lines}
    columns = {env: header.index(f" {env} ") + 1 for env in ("webshop", "miniwob", "webarena", "alfworld", "hotpotqa")}
    marks = {(title, env): line[columns[env] :].split(" ")[0] for title, line in rows.items() for env in columns}
    for method, env, own in cells:
        assert marks[(method.title, env)] == ("paper" if own else "yes")
    assert sum(mark in ("paper", "yes") for mark in marks.values()) == len(cells)
    assert marks[("Devil's Advocate", "webarena")] == "paper"
    assert "Plan+Act: --set remedies=0" in rows["Devil's Advocate"]


@pytest.mark.parametrize("command", ["run", "eval"])
def test_help_of_a_method_lists_its_own_settings_with_their_defaults(command, capsys):
    with pytest.raises(SystemExit) as done:
        main([command, "da", "--help"])
    assert done.value.code == 0
    shown = capsys.readouterr().out
    assert "settings of devils_advocate" in shown
    assert "max_episodes=7" in shown and "remedies=2" in shown and "temperature=1.0" in shown
    assert "backup=" not in shown and "planning=" not in shown  # other methods' settings are not its own


def test_graphs_lists_each_graph_with_its_settings(capsys):
    assert main(["graphs"]) == 0
    shown = capsys.readouterr().out
    laser = next(line for line in shown.splitlines() if line.startswith("laser "))
    assert "settings: max_actions=15, backup=true" in laser and "remedies" not in laser


@pytest.mark.parametrize("command", [["resume", "no-such-thread"], ["history", "no-such-thread"]])
@pytest.mark.parametrize("home", ["default", "INTROSPECT_HOME"])
def test_an_unknown_thread_is_one_line_and_writes_nothing(capsys, monkeypatch, tmp_path, command, home):
    """Asking the default SQLite checkpoint for a thread it cannot hold (there is no file yet)
    creates neither the file nor its folder: the command only reads threads that exist."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INTROSPECT_CHECKPOINT", raising=False)
    if home == "INTROSPECT_HOME":
        monkeypatch.setenv("INTROSPECT_HOME", str(tmp_path / "home"))
    else:  # the default home is the user's (XDG_DATA_HOME), never the current folder
        monkeypatch.delenv("INTROSPECT_HOME", raising=False)
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    code, out, err = run_cli(capsys, *command)
    assert code == 2 and "no checkpointed thread 'no-such-thread'" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert list(tmp_path.rglob("*")) == []


@pytest.mark.parametrize("command", ["run", "eval", "train"])
def test_the_method_argument_lists_its_choices(capsys, command):
    from graphs import registry

    with pytest.raises(SystemExit):
        main([command, "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert f"one of: {', '.join(registry())}" in shown


def test_fork_tells_its_checkpoint_id_from_the_checkpoint_database(capsys):
    with pytest.raises(SystemExit):
        main(["fork", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "--at CHECKPOINT_ID" in shown and "--checkpoint names the database the thread is in" in shown


def test_a_reader_that_goes_away_ends_the_command_without_a_traceback():
    """`introspect graphs --mermaid | head -0`: the pipe is closed before the command prints."""
    child = subprocess.Popen(
        [sys.executable, "-m", "introspect.cli", "graphs", "--mermaid"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # long before the child has imported what it needs to print
    err = child.stderr.read().decode()
    assert child.wait(timeout=60) == 141 and "Traceback" not in err, err
