"""The embedded model (nodes.runtime.local) answers through llama.cpp's real OpenAI-compatible server:
forced tool calls, stop sequences, token limits and usage arrive as from any such server, a
prompt longer than the context is refused in a line naming the setting, and the servers end
with the process that started them, also when it is SIGKILLed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from nodes.runtime import local
from nodes.runtime.llm import Caller, ModelCallError, ModelConfigError
from tests.support.cli import child_env

pytestmark = [pytest.mark.slow, pytest.mark.local, pytest.mark.timeout(900)]  # a real model on shared cores


@tool
def click(target: str) -> str:
    """Click the button whose text is ``target``."""
    return target


def caller(max_tokens: int = 40, task: str = "t") -> Caller:
    return Caller("local", temperature=0.0, max_tokens=max_tokens, calls_before=0, task=task)


async def test_a_forced_tool_call_comes_back_as_a_parsed_call_with_usage():
    ask = caller()
    reply = await ask([HumanMessage("Click the Buy Now button.")], tools=[click], tool_choice="click")
    assert [call["name"] for call in reply.tool_calls] == ["click"]
    assert isinstance(reply.tool_calls[0]["args"].get("target"), str)
    assert ask.usage["model_calls"] == 1 and ask.usage["input_tokens"] > 0 and ask.usage["output_tokens"] > 0
    assert ask.usage["cost_usd"] is None  # a local model is unpriced, never $0


async def test_max_tokens_bounds_the_reply_and_a_stop_sequence_cuts_it():
    ask = caller(max_tokens=8)
    await ask([HumanMessage("Write a long story about a ship.")])
    assert 0 < ask.usage["output_tokens"] <= 8
    reply = await caller(max_tokens=40)([HumanMessage("Count from 1 to 10, separated by commas.")], stop=["5"])
    assert "5" not in reply.text and "6" not in reply.text


async def test_a_prompt_longer_than_the_context_is_refused_naming_the_setting(monkeypatch):
    monkeypatch.setenv("INTROSPECT_LOCAL_CONTEXT", "256")
    refused = r"the prompt \(\d+ tokens\) .* exceed the local model's context of 256 tokens: raise INTROSPECT_LOCAL_"
    with pytest.raises(ModelCallError, match=refused):
        await caller(task="long")([HumanMessage("word " * 600)])
    local.local_model("local").close()  # the 256-token servers are not reused


def test_settings_out_of_range_are_refused_in_one_line(monkeypatch):
    monkeypatch.setenv("INTROSPECT_LOCAL_SLOTS", "0")
    with pytest.raises(ModelConfigError, match=r"^INTROSPECT_LOCAL_SLOTS='0': expected a whole number from 1 to 64$"):
        local.local_model("local")


@pytest.mark.parametrize(
    "content,message",
    [
        (None, r"cannot read the GGUF file .*missing\.gguf"),
        (b"not a model at all", r"is not a GGUF file"),
    ],
)
def test_a_missing_or_foreign_file_is_refused_before_a_server_starts(tmp_path: Path, content, message):
    path = tmp_path / "missing.gguf"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ModelConfigError, match=message):
        local.local_model(f"gguf:{path}")


async def test_a_corrupt_gguf_file_is_refused_when_its_server_starts(tmp_path: Path):
    path = tmp_path / "corrupt.gguf"
    path.write_bytes(b"GGUF" + os.urandom(4096))
    served = local.local_model(f"gguf:{path}")
    with pytest.raises(ModelConfigError, match=r"^llama\.cpp could not serve .*corrupt\.gguf"):
        await served.start()
    assert all(slot.gone() or slot.process is None for slot in served.slots)


def test_a_port_in_use_is_refused_naming_the_setting(monkeypatch):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        monkeypatch.setenv("INTROSPECT_LOCAL_PORT", str(taken.getsockname()[1]))
        with pytest.raises(ModelConfigError, match=r"port \d+ on 127\.0\.0\.1 is not free .*INTROSPECT_LOCAL_PORT"):
            local.local_model("local")


def test_the_servers_end_with_their_parent_even_after_sigkill(tmp_path: Path):
    script = (
        "import asyncio\n"
        "from nodes.runtime import local\n"
        "served = local.local_model('local')\n"
        "asyncio.run(served.start())\n"
        "print(' '.join(str(slot.process.pid) for slot in served.slots), flush=True)\n"
        "import time; time.sleep(600)\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script],
        env=child_env(INTROSPECT_LOCAL_SLOTS="2"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = parent.stdout.readline() if parent.stdout else ""
        servers = [int(pid) for pid in line.split()]
        assert len(servers) == 2 and all(_alive(pid) for pid in servers)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in servers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in servers), "a llama.cpp server outlived its SIGKILLed parent"


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by init, counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_without_llama_cpp_python_the_command_says_how_to_install_it(monkeypatch, tmp_path: Path):
    """llama-cpp-python not installed (the [local] extra left out): one line, exit 2, nothing written."""
    from tests.support.cli import output, run_main

    real = local.importlib.util.find_spec
    monkeypatch.setattr(local.importlib.util, "find_spec", lambda name: None if name == "llama_cpp" else real(name))
    monkeypatch.setenv("INTROSPECT_HOME", str(tmp_path / "home"))
    results = tmp_path / "r.jsonl"
    args = ["eval", "laser", "--tasks", "12", "--model", "local", "--results", str(results)]
    assert run_main(args, logs=tmp_path / "logs", name="eval") == 2
    out, err = output(tmp_path / "logs", "eval")
    assert out == "" and err.strip().splitlines() == [
        "introspect: local needs llama-cpp-python with its server: pip install 'introspect-agents[local]'"
    ]
    assert not results.exists() and not (tmp_path / "home").exists()


def test_the_prefix_cache_counts_the_logits_each_state_keeps():
    """llama-cpp-python counts a cached state's KV bytes only; each also keeps a logits array
    (100 MB for SmolLM2) that made a server grow to 8 GB on a 2 GB cache."""
    import numpy as np
    from llama_cpp.llama import LlamaState

    from nodes.runtime.llama_server import StateCache

    def state(token: int) -> LlamaState:
        scores = np.zeros((4, 1000), dtype=np.single)  # 16 kB beside a 10-byte KV state
        return LlamaState(np.array([token], dtype=np.intc), scores, 1, b"0" * 10, 10, 0)

    cache = StateCache(capacity_bytes=40_000)  # room for two states, counted whole
    for token in (1, 2, 3):
        cache[(token,)] = state(token)
    assert list(cache.cache_state) == [(2,), (3,)]  # the oldest went
    assert cache.cache_size <= 40_000
