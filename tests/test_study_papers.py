"""The papers as study files (``studies/papers/``): each parses with the paper's published numbers,
its dry run prints an estimate with no key, what cannot run here is named before anything is
written, a bad published number is one line (exit 2), and one task of a paper study runs on a
script standing in for the paper's model, its report printing the paper's numbers beside."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from envs.miniwob.tasks import PAPER_43
from introspect.study.spec import load
from tests.support.cli import ROOT, output, run_main
from tests.support.report import table

PAPERS = sorted((ROOT / "studies" / "papers").glob("*.toml"))
GIVEUP = ROOT / "studies" / "giveup.jsonl"


def test_there_is_one_study_per_headline_table():
    assert [p.stem for p in PAPERS] == [
        "autoplan-alfworld",
        "autoplan-hotpotqa",
        "devils-advocate-webarena",
        "laser-webshop",
        "structured-reflection-miniwob",
    ]


@pytest.mark.parametrize("path", PAPERS, ids=lambda p: p.stem)
def test_each_paper_study_parses_with_its_published_numbers(path):
    study = load(path, models=False)
    assert study.published, path
    labels = {run.label for run in study.runs}
    for number in study.published:
        assert (number.run is None or number.run in labels) and number.table
        assert number.low <= number.high


def test_the_structured_reflection_study_carries_appendix_f_for_every_task_of_the_43():
    study = load(ROOT / "studies" / "papers" / "structured-reflection-miniwob.toml", models=False)
    assert {p.task for p in study.published} == set(PAPER_43)
    assert {p.trials for p in study.published} == {1, 3, 5}
    assert len(study.published) == 3 * 43
    widget = {p.trials: p.low for p in study.published if p.task == "click-widget"}
    assert widget == {1: 0.64, 3: 0.96, 5: 1.0}  # Table 10's click-widget row


@pytest.mark.parametrize("path", PAPERS, ids=lambda p: p.stem)
def test_a_dry_run_prints_each_run_s_estimate_with_no_key(path, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.chdir(ROOT)
    logs = tmp_path / "logs"
    code = run_main(["study", "run", str(path), "--dry-run", "--out", str(tmp_path / "s")], logs=logs, name="dry")
    out, err = output(logs, "dry")
    assert code == 0, err
    study = load(path, models=False)
    for run in study.runs:  # the bound: calls, tokens, the paper's model's price, and time at a stated assumption
        blocked = r"(  cannot run here: .*\n)?"
        bound = (
            r"at most \d+ model calls, \d+ output tokens, \d+ input tokens \(a context window per call\), "
            r"\$\d+\.\d{4} \(bound\); ~[\d.]+ (s|min|h|days) at \d+ in flight \(10 s per call assumed\)"
        )
        shown = rf"^{re.escape(run.label)}: .*\n{blocked}  {len(run.tasks)} task runs; {bound}$"
        assert re.search(shown, out, re.M), out
    total = rf"^study {study.name}: at most \d+ model calls, \d+ output and \d+ input tokens, \$[\d.]+ \(bound\); ~"
    assert re.search(total, out, re.M), out
    assert "nothing was run or written" in out
    assert not (tmp_path / "s").exists()


def test_a_dry_run_names_what_cannot_run_here_and_what_stands_in(tmp_path, monkeypatch):
    for name in [k for k in os.environ if k.startswith("WEBARENA_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no plans/ here
    logs = tmp_path / "logs"
    for paper in ("devils-advocate-webarena", "autoplan-hotpotqa"):
        path = ROOT / "studies" / "papers" / f"{paper}.toml"
        assert run_main(["study", "run", str(path), "--dry-run"], logs=logs, name=paper) == 0
    webarena, _ = output(logs, "devils-advocate-webarena")
    assert webarena.count("cannot run here: webarena task 0 needs the") == 2
    assert "set WEBARENA_" in webarena and 'split = "local"' in webarena
    hotpotqa, _ = output(logs, "autoplan-hotpotqa")
    assert "cannot run here: plan file not found: plans/hotpotqa.json" in hotpotqa
    assert hotpotqa.count("cannot run here") == 1  # the ReAct (0 Shot) run needs no plan


def test_a_real_run_without_the_webarena_sites_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    for name in [k for k in os.environ if k.startswith("WEBARENA_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    logs = tmp_path / "logs"
    path = ROOT / "studies" / "papers" / "devils-advocate-webarena.toml"
    code = run_main(["study", "run", str(path), "--out", str(tmp_path / "s")], logs=logs, name="real")
    out, err = output(logs, "real")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "run 'AR': webarena task 0 needs the" in err and 'split = "local"' in err
    assert not (tmp_path / "s").exists()


BASE = (
    'name = "p"\nmodel = "scripted:{giveup}"\n[[runs]]\nmethod = "laser"\nenv = "webshop"\ntasks = "0"\nlabel = "L"\n'
)
GOOD = 'table = "Table 1"\nmethod = "laser"\nenv = "webshop"\nmetric = "success_rate"\nvalue = 0.5\n'


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        (
            GOOD.replace("0.5", "50.0"),
            "published[1]: the paper's figure must be a share from 0 to 1 (0.235 for 23.5%), got 50.0",
        ),
        (GOOD.replace("value = 0.5", "between = [0.6, 0.5]"), "published[1]: between's LOW 0.6 is above its HIGH 0.5"),
        (GOOD.replace("value = 0.5", "between = [0.5]"), "published[1]: between must be two numbers [LOW, HIGH]"),
        (GOOD + "between = [0.4, 0.5]\n", "give the paper's figure as value = N, or between = [LOW, HIGH], not both"),
        (GOOD.replace("value = 0.5\n", ""), "give the paper's figure as value = N"),
        (GOOD.replace("success_rate", "sucess"), "published[1]: unknown metric 'sucess'; choose from: success_rate"),
        (
            GOOD.replace('metric = "success_rate"\nvalue = 0.5', 'metric = "plan_revisions"\nvalue = -1'),
            "a number of count >= 0, got -1",
        ),
        (GOOD + "page = 0\n", "published[1]: page must be a whole number >= 1, got 0"),
        (GOOD + 'run = "M"\n', "published[1]: run 'M' is not a run of laser on webshop in this study; those are: L"),
        (GOOD.replace("webshop", "webarena"), "no run of this study reproduces it (no run of laser on webarena)"),
        (GOOD.replace("webshop", "alfworld"), "laser does not run on env 'alfworld'"),
        (GOOD + 'task_type = "Heat it"\n', "unknown task_type 'Heat it'; choose from: Pick, Light"),
        (GOOD + "colour = 1\n", "published[1]: unknown key 'colour'"),
        (GOOD.replace('table = "Table 1"\n', ""), "published[1]: table must be text (it is required)"),
    ],
)
def test_a_bad_published_number_is_one_line_exit_2_and_nothing_runs(entry, said, tmp_path):
    spec = tmp_path / "study.toml"
    spec.write_text(BASE.format(giveup=GIVEUP) + "[[published]]\n" + entry, encoding="utf-8")
    logs = tmp_path / "logs"
    code = run_main(["study", "run", str(spec), "--dry-run", "--out", str(tmp_path / "s")], logs=logs, name="bad")
    out, err = output(logs, "bad")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [err.strip()] and said in err, err
    assert not (tmp_path / "s").exists()


# each paper study made small: one task (or one per run), the smallest limits, offline options
SMALL = {
    "laser-webshop": [('split = "test"', 'tasks = "0"'), ("max_actions = 15", "max_actions = 2")],
    "autoplan-hotpotqa": [
        ('split = "test"', 'split = "test"\ntasks = "0:1"'),
        ("max_actions = 10}", 'max_actions = 2}\nenv_options = {backend = "local", judge = "off"}'),
    ],
    "autoplan-alfworld": [('split = "valid_unseen', 'tasks = "0:1"\nsplit = "valid_unseen'), ("= 35}", "= 2}")],
    "devils-advocate-webarena": [
        ('split = "webarena"', 'tasks = "shop-0"'),
        ("max_actions = 30, max_episodes = 7", "max_actions = 2, max_episodes = 1"),
    ],
    "structured-reflection-miniwob": [
        ('split = "paper-43@0:25"', 'tasks = "click-button/1"'),
        ("max_trials = 5", "max_trials = 1, max_actions = 2"),
    ],
}
BROWSER = ("devils-advocate-webarena", "structured-reflection-miniwob")
PLAN = "1. Go to where the target object may be and take it.\n2. Put it where the task says."


def small_study(paper: str, model: str, folder: Path, settings: str = "") -> Path:
    """A copy of ``paper``'s study file in ``folder`` made small (``SMALL``), on ``model``, with
    ``settings`` added to every run's (``max_tokens = 64, ``), its plans stood in for by a
    plain-text plan; plan paths are relative: run it from ``folder``."""
    text = (ROOT / "studies" / "papers" / f"{paper}.toml").read_text()
    text = re.sub(r'^model = ".*"$', f'model = "{model}"', text, count=1, flags=re.M)
    for old, new in SMALL[paper]:
        assert old in text, old
        text = text.replace(old, new)
    if settings:
        for key in re.findall(r"(\w+) = ", settings):  # a setting the file gives is replaced, not given twice
            text = re.sub(rf"\b{key} = [^,}}]+, ?", "", text)
        text = re.sub(r"^settings = \{", "settings = {" + settings, text, flags=re.M)
    for plan in re.findall(r'^plan = "(.+)"$', text, re.M):
        (folder / plan).parent.mkdir(parents=True, exist_ok=True)
        (folder / plan).write_text(PLAN, encoding="utf-8")
    spec = folder / f"{paper}.toml"
    spec.write_text(text, encoding="utf-8")
    return spec


def assert_the_paper_beside(spec: Path, report: Path) -> None:
    """The study's report has the paper's table, each published number beside a configuration that ran."""
    study = load(spec)
    md = (report / "report.md").read_text()
    title = f"{study.runs[0].method.title} ({study.runs[0].method.paper}): the paper's numbers beside the reproduced"
    rows = table(md, title)
    assert len(rows) == len(study.published)  # one configuration reproduces each number
    assert all(r[3] != "(not run yet)" for r in rows)
    ran = [r for r in rows if r[5] != "0"]
    assert ran and all(r[6] != "-" and r[9] in ("yes", "no", "partly") for r in ran)


@pytest.mark.parametrize("paper", [pytest.param(p, marks=[pytest.mark.browser] if p in BROWSER else []) for p in SMALL])
def test_one_task_of_each_paper_study_runs_on_a_script_and_its_report_sets_the_paper_beside(
    paper, tmp_path, monkeypatch
):
    """The study's model stood in for by a script that gives up (its runs end as failures the
    method declares); untrained plans stood in for by a plain-text plan; the report has the
    paper's table, each published number beside a configuration that ran."""
    spec = small_study(paper, f"scripted:{GIVEUP}", tmp_path)
    monkeypatch.chdir(tmp_path)  # a plan path is relative to where the command runs
    logs = tmp_path / "logs"
    code = run_main(["study", "run", str(spec), "--out", str(tmp_path / "s")], logs=logs, name="run")
    out, err = output(logs, "run")
    assert code == 0, err
    assert_the_paper_beside(spec, tmp_path / "s" / "report")


def test_a_retired_paper_model_is_refused_before_anything_is_written_with_a_stand_in(openai_stub, tmp_path):
    """gpt-4-0613, LASER's paper model, is not in the provider's list (the stub's): `study run`
    says so in one line and names a model the provider serves to set as `model`."""
    openai_stub.models = ("gpt-4o-mini", "gpt-4o")
    logs = tmp_path / "logs"
    path = ROOT / "studies" / "papers" / "laser-webshop.toml"
    code = run_main(["study", "run", str(path), "--out", str(tmp_path / "s")], logs=logs, name="retired")
    out, err = output(logs, "retired")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "the model openai:gpt-4-0613 (LASER model) is not served" in err
    assert "stand in with LASER model=openai:gpt-4o" in err
    assert not (tmp_path / "s").exists() and openai_stub.requests == []


def test_with_every_webarena_site_set_nothing_is_named(tmp_path, monkeypatch):
    from envs.webarena.tasks import WEBARENA_SITES

    for _, variable in WEBARENA_SITES.values():
        monkeypatch.setenv(variable, "http://127.0.0.1:9")
    logs = tmp_path / "logs"
    path = ROOT / "studies" / "papers" / "devils-advocate-webarena.toml"
    assert run_main(["study", "run", str(path), "--dry-run"], logs=logs, name="set") == 0
    out, _ = output(logs, "set")
    assert "812 task runs" in out and "cannot run here" not in out
