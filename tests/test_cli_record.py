"""``--record FILE`` and ``--model replay:FILE``: a run recorded through the real ChatOpenAI
client (against the local stub, with a distinctive key) replays to the same end at no cost,
an evaluation's recording replays task by task, and a request the recording does not hold
(a changed prompt, a call too many) stops the replay with a line naming the call."""

from __future__ import annotations

import json
import re

from tests.conftest import STUB_KEY
from tests.support.artefacts import leaks
from tests.support.cli import output, run_main
from tests.support.laser_demo import DEMO, REPLIES, demo_replies, write_demo_script

TASK = DEMO["task_id"]


def final_line(logs, name: str) -> str:
    """The outcome line without its cost (a replay is unpriced)."""
    line = next(x for x in output(logs, name)[0].splitlines() if x.startswith(("finished:", "stopped:")))
    return re.sub(r" cost=\S+", "", line)


def lines(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_a_recorded_run_replays_to_the_same_end_and_holds_no_key(openai_stub, tmp_path):
    openai_stub.replies.extend(demo_replies())
    recording, logs = tmp_path / "run.jsonl", tmp_path / "logs"
    code = run_main(
        ["run", "laser", "--task", TASK, "--model", "openai:gpt-4o-mini", "--record", str(recording)],
        logs=logs,
        name="recorded",
    )
    assert code == 0, output(logs, "recorded")
    assert {h.get("authorization") for h in openai_stub.headers} == {f"Bearer {STUB_KEY}"}
    assert leaks(tmp_path, [STUB_KEY]) == []

    calls = lines(recording)
    assert [c["position"] for c in calls] == list(range(len(REPLIES))) and {c["task_id"] for c in calls} == {TASK}
    assert calls[0]["node"] == "search" and calls[0]["request"]["messages"][0]["role"] == "system"
    assert calls[1]["request"]["tools"][0]["function"]["name"] == "Search"  # the schemas offered
    assert calls[1]["tool_calls"][0]["name"] == "Search" and calls[1]["usage"]["input_tokens"] > 0

    asked = len(openai_stub.requests)
    code = run_main(["run", "laser", "--task", TASK, "--model", f"replay:{recording}"], logs=logs, name="replayed")
    assert code == 0, output(logs, "replayed")
    assert len(openai_stub.requests) == asked  # nothing sent
    assert final_line(logs, "replayed") == final_line(logs, "recorded")
    assert f"success=True reward=1.000 steps=8 model_calls={len(REPLIES)}" in final_line(logs, "replayed")


def test_a_changed_prompt_stops_the_replay_naming_the_call(tmp_path):
    recording, logs = tmp_path / "run.jsonl", tmp_path / "logs"
    script = write_demo_script(tmp_path / "script.jsonl")
    assert (
        run_main(
            ["run", "laser", "--task", TASK, "--model", script, "--record", str(recording)], logs=logs, name="recorded"
        )
        == 0
    )
    calls = lines(recording)
    changed = calls[4]["request"]["messages"][-1]
    changed["content"] = changed["content"].replace("Instruction:", "Instructions:", 1)
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(json.dumps(c) + "\n" for c in calls))

    code = run_main(["run", "laser", "--task", TASK, "--model", f"replay:{edited}"], logs=logs, name="changed")
    err = output(logs, "changed")[1]
    assert code == 1, err
    assert f"does not hold call 5 of task '{TASK}' (graph step {calls[4]['step']}, node {calls[4]['node']})" in err
    assert "differs at character" in err and "Instructions:" in err

    short = tmp_path / "short.jsonl"
    short.write_text("".join(json.dumps(c) + "\n" for c in lines(recording)[:7]))
    code = run_main(["run", "laser", "--task", TASK, "--model", f"replay:{short}"], logs=logs, name="short")
    assert code == 1 and f"has no call 8 of task '{TASK}'" in output(logs, "short")[1]


def test_an_evaluation_replays_task_by_task(tmp_path):
    """Two tasks run concurrently: their calls interleave in the recording and are found by task."""
    recording, logs = tmp_path / "eval.jsonl", tmp_path / "logs"
    script = write_demo_script(tmp_path / "script.jsonl")
    tasks = f"{TASK},synthetic-1"
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    assert (
        run_main(
            [
                "eval",
                "laser",
                "--tasks",
                tasks,
                "--model",
                script,
                "--concurrency",
                "2",
                "--record",
                str(recording),
                "--results",
                str(first),
            ],
            logs=logs,
            name="recorded",
        )
        == 0
    )
    assert {c["task_id"] for c in lines(recording)} == {TASK, "synthetic-1"}
    assert (
        run_main(
            [
                "eval",
                "laser",
                "--tasks",
                tasks,
                "--model",
                f"replay:{recording}",
                "--concurrency",
                "2",
                "--results",
                str(second),
            ],
            logs=logs,
            name="replayed",
        )
        == 0
    ), output(logs, "replayed")
    keys = ("task_id", "success", "reward", "steps", "stop_reason", "model_calls", "input_tokens", "output_tokens")
    assert sorted([{k: r[k] for k in keys} for r in lines(second)], key=str) == sorted(
        [{k: r[k] for k in keys} for r in lines(first)], key=str
    )


def test_a_recording_path_that_cannot_be_written_is_refused_before_the_run(tmp_path):
    logs = tmp_path / "logs"
    code = run_main(
        ["run", "laser", "--task", TASK, "--model", write_demo_script(tmp_path / "s.jsonl"), "--record", str(tmp_path)],
        logs=logs,
        name="dir",
    )
    out, err = output(logs, "dir")
    assert code == 2 and err.strip() == f"introspect: --record {tmp_path} is a directory; name a .jsonl file"
    assert "thread:" not in out


def test_a_script_is_not_a_recording(tmp_path):
    logs = tmp_path / "logs"
    script = write_demo_script(tmp_path / "s.jsonl").removeprefix("scripted:")
    code = run_main(["run", "laser", "--task", TASK, "--model", f"replay:{script}"], logs=logs, name="script")
    assert code == 2 and "not a recording" in output(logs, "script")[1]
