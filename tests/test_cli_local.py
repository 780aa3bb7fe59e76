"""The command on a real model: the embedded one (``--model local``, the default of ``run``
without a key) and llama-cpp-python's own OpenAI-compatible server reached through
OPENAI_BASE_URL, the path a user with their own llama.cpp, vLLM or Ollama takes. Each method
runs one short task on it to its own stop reason, never a traceback or an error row."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from nodes import local
from tests.support.cli import ROOT, child_env

# a real model on two shared cores: a call takes seconds, a task minutes when the machine is busy
pytestmark = [pytest.mark.slow, pytest.mark.local, pytest.mark.timeout(1200)]

ALFWORLD_GAME = (
    "json_2.1.1/valid_unseen/pick_heat_then_place_in_recep-Apple-None-GarbageCan-10/trial_T20190908_145050_918567"
)
# one short task of each method on its paper's benchmark (Devil's Advocate's: the local shop
# WebArena tasks run on, since WebArena's own sites are not here), at small limits
SHORT_TASKS = {
    "laser": ["--env", "webshop", "--task", "12", "--set", "max_actions=3"],
    "structured_reflection": ["--env", "miniwob", "--task", "click-button/1", "--set", "max_trials=1"],
    "devils_advocate": [
        *("--env", "webarena", "--task", "shop-0"),
        *("--set", "max_episodes=1", "--set", "max_actions=2"),
    ],
    "autoplan": ["--env", "alfworld", "--task", ALFWORLD_GAME, "--set", 'max_actions={"alfworld": 3}'],
}


def without_openai(**extra: str) -> dict[str, str]:
    """The tests' environment with no OpenAI key or server, then ``extra``."""
    env = child_env()
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(name, None)
    return {**env, **extra}


def run_command(args: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 600) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "graphs.app.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done.returncode, done.stdout, done.stderr


def test_the_main_job_runs_on_the_embedded_model_without_a_key(tmp_path: Path):
    """README's main job on a fresh machine: no key, no server, no --model."""
    status, out, err = run_command(["run", "laser", "--task", "12"], cwd=tmp_path, env=without_openai())
    assert status == 0, err
    assert "model: local, the embedded SmolLM2-135M-Instruct" in err and "solves little" in err
    finished = [line for line in out.splitlines() if line.startswith("finished:")]
    assert finished and "model_calls=" in finished[0] and "cost=unpriced" in finished[0]
    assert "Traceback" not in out + err


@pytest.mark.parametrize("command", ["eval", "study"])
def test_commands_of_many_tasks_ask_for_a_named_model(tmp_path: Path, command: str):
    if command == "eval":
        args = ["eval", "laser", "--tasks", "12", "--results", str(tmp_path / "r.jsonl")]
    else:
        (tmp_path / "s.toml").write_text('name = "s"\n[[runs]]\nmethod = "laser"\ntasks = "12"\n')
        args = ["study", "run", str(tmp_path / "s.toml")]
    before = sorted(tmp_path.rglob("*"))
    status, out, err = run_command(args, cwd=tmp_path, env=without_openai(INTROSPECT_HOME=str(tmp_path / "home")))
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "local" in err and "no model named" in err
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("content", [None, b"GGUF" + bytes(range(256)) * 16])
def test_a_missing_or_corrupt_gguf_file_is_one_line_and_exit_2(tmp_path: Path, content: bytes | None):
    path = tmp_path / "model.gguf"
    if content is not None:
        path.write_bytes(content)
    results = tmp_path / "r.jsonl"
    args = ["eval", "laser", "--tasks", "12", "--model", f"gguf:{path}", "--results", str(results)]
    status, out, err = run_command(args, cwd=tmp_path, env=without_openai(INTROSPECT_HOME=str(tmp_path / "home")))
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1 and str(path) in err
    assert not results.exists() and not (tmp_path / "home").exists()


@pytest.fixture(scope="module")
def llama_cpp_server() -> Iterator[str]:
    """llama-cpp-python's own server (``python -m llama_cpp.server``) on a free port, serving the
    embedded GGUF file as the model ``smollm2``; yields its OpenAI base URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        *(sys.executable, "-m", "llama_cpp.server", "--model", str(local.gguf_file("local"))),
        *("--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192"),
    ]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=1):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("llama_cpp.server did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.browser
@pytest.mark.parametrize("method", sorted(SHORT_TASKS))
def test_each_method_runs_a_short_task_on_a_real_llama_cpp_server(method: str, llama_cpp_server: str, tmp_path: Path):
    env = without_openai(OPENAI_BASE_URL=llama_cpp_server, INTROSPECT_HOME=str(tmp_path / "home"))
    status, out, err = run_command(
        ["run", method, *SHORT_TASKS[method], "--model", "openai:smollm2"], cwd=ROOT, env=env, timeout=900
    )
    assert status == 0, err[-2000:]
    finished = [line for line in out.splitlines() if line.startswith("finished:")]
    assert finished and "model_calls=" in finished[0], out[-2000:]
    assert "Traceback" not in out + err
