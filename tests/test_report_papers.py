"""The report leads with the answer (issue 29, point 6; issue 30, point 1): the paper's published
numbers beside the reproduced ones (the difference, and whether the paper's value lies inside the
reproduction's interval), then the paired comparisons with their intervals, above the figures, and
no table folded away. Every expected figure is computed here from the rows."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.support.cli import output, run_main
from tests.support.report import header, row_of, table

AR = {"t0": (1, 0), "t1": (1, 1), "t2": (0, 1), "t3": (0, 0), "t4": (1, 1)}  # success, plan revisions
PLAN_ACT = {"t0": (0, 2), "t1": (1, 2), "t2": (0, 2), "t3": (0, 2), "t4": (0, 2)}
WIDGET = {0: (True, 1), 1: (True, 2), 2: (False, 3), 3: (True, 3)}  # seed: success, the trial it ended in
HEAT = "json_2.1.1/valid_unseen/pick_heat_then_place_in_recep-Apple-None-GarbageCan-10/trial_T1"
PICK = "json_2.1.1/valid_unseen/pick_and_place_simple-Book-None-Desk-10/trial_T2"

DA, SR, AP = (
    {"method": "devils_advocate", "env": "webarena"},
    {"method": "structured_reflection", "env": "miniwob", "metric": "success_rate", "task": "click-widget"},
    {"method": "autoplan", "env": "alfworld", "metric": "success_rate", "task_type": "Heat"},
)
PUBLISHED: list[dict[str, Any]] = [
    {"table": "Section 4.2", **DA, "run": "AR", "row": "AR", "metric": "success_rate", "value": 0.235},
    {"table": "Table 1", "page": 7, **DA, "run": "AR", "row": "AR", "metric": "plan_revisions", "value": 0.6},
    {"table": "Table 1", **DA, "run": "Plan-Act", "row": "Plan+Act", "metric": "plan_revisions", "between": [1.5, 2]},
    {"table": "Table 1", **DA, "run": "Plan-Act", "row": "Plan+Act", "metric": "actions_first_episode", "value": 4.01},
    {"table": "Table 10", **SR, "trials": 1, "value": 0.64},
    {"table": "Table 10", **SR, "trials": 3, "value": 0.96},
    {"table": "Table 3a", **AP, "run": "ReAct", "row": "ReAct (0 Shot)", "value": 0.35},
    {"table": "Table 3a", **AP, "run": "AutoPlan", "row": "AutoPlan", "value": 0.96},
]
# the study file's published section, one inline table per line (TOML's values are JSON's here)
SPEC = (
    'name = "papers"\npublished = [\n'
    + "".join("  {" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in entry.items()) + "},\n" for entry in PUBLISHED)
    + "]\n"
)


def row(method: str, env: str, label: str, task: str, success: bool, **extra: Any) -> dict[str, Any]:
    return {
        "task_id": task,
        "method": method,
        "env": env,
        "model": "scripted:x.jsonl",
        "fingerprint": label,
        "settings": {},
        "label": label,
        "success": success,
        "reward": float(success),
        "steps": 2,
        "model_calls": 1,
        "input_tokens": 10,
        "output_tokens": 1,
        "cost_usd": None,
        "seconds": 1.0,
        "error": "",
        **extra,
    }


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict[str, Any]:
    """A study folder whose spec carries published numbers, its results, and its report."""
    folder = tmp_path_factory.mktemp("papers")
    (folder / "spec.toml").write_text(SPEC, encoding="utf-8")
    results = folder / "results"
    results.mkdir()
    files = {
        "AR": [row("devils_advocate", "webarena", "AR", t, bool(s), plan_revisions=n) for t, (s, n) in AR.items()],
        "Plan-Act": [
            row("devils_advocate", "webarena", "Plan-Act", t, bool(s), plan_revisions=n, actions_first_episode=4)
            for t, (s, n) in PLAN_ACT.items()
        ],
        "SR": [
            row("structured_reflection", "miniwob", "SR", f"click-widget/{seed}", ok, trials=trials)
            for seed, (ok, trials) in WIDGET.items()
        ]
        + [row("structured_reflection", "miniwob", "SR", "click-button/0", False, trials=5)],
        "ReAct": [row("autoplan", "alfworld", "ReAct", HEAT, False), row("autoplan", "alfworld", "ReAct", PICK, True)],
        "AutoPlan": [row("autoplan", "alfworld", "AutoPlan", HEAT, True)],
    }
    for label, rows in files.items():
        (results / f"{label}.r1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    logs = folder / "logs"
    code = run_main(["report", str(folder), "--out", str(folder / "report")], logs=logs, name="report")
    out, err = output(logs, "report")
    assert code == 0, err
    return {"md": (folder / "report" / "report.md").read_text(), "index": (folder / "report" / "index.html")}


TITLE = "Devil's Advocate (Wang et al. 2024): the paper's numbers beside the reproduced"


def pct(value: float) -> str:
    return f"{100 * value:.1f}"


def interval(cell: str) -> tuple[float, float, float]:
    mean, low, high = map(float, re.fullmatch(r"(\S+) \[(\S+), (\S+)\]", cell).groups())
    return mean, low, high


def test_each_published_number_stands_beside_its_reproduction_with_the_difference(report):
    assert header(report["md"], TITLE) == [
        "paper's row",
        "where",
        "metric",
        "configuration",
        "model",
        "tasks",
        "reproduced [95% CI]",
        "paper",
        "difference",
        "paper's value inside the CI",
    ]
    rows = table(report["md"], TITLE)
    success = row_of(rows, "AR", "Section 4.2", "success_rate")
    rate = sum(s for s, _ in AR.values()) / len(AR)
    mean, low, high = interval(success[6])
    assert success[5] == str(len(AR)) and success[3].endswith("AR") and success[4] == "scripted:x.jsonl"
    assert pct(rate) == f"{mean:.1f}" and low <= mean <= high and low < high
    assert success[7] == "23.5" and success[8] == f"{100 * rate - 23.5:+.1f}"
    assert success[9] == ("yes" if low <= 23.5 <= high else "no")
    revisions = row_of(rows, "AR", "Table 1, p. 7", "plan_revisions")
    assert interval(revisions[6])[0] == pytest.approx(sum(n for _, n in AR.values()) / len(AR))
    assert revisions[7] == "0.60"


def test_a_paper_value_outside_inside_or_straddling_the_interval_is_said_so(report):
    rows = table(report["md"], TITLE)
    first = row_of(rows, "Plan+Act", "Table 1", "actions_first_episode")  # every task 4 actions: [4, 4]
    assert first[6] == "4.00 [4.00, 4.00]" and first[7] == "4.01" and first[8] == "-0.01" and first[9] == "no"
    bound = row_of(rows, "Plan+Act", "Table 1", "plan_revisions")  # every task 2: the bound 1.5-2.0 touches it
    assert bound[6] == "2.00 [2.00, 2.00]" and bound[7] == "1.50 to 2.00"
    assert bound[8] == "+0.00 to +0.50" and bound[9] == "partly"


def test_trials_task_and_task_type_narrow_what_is_counted(report):
    sr = table(report["md"], "Structured Reflection (Li et al. 2023): the paper's numbers beside the reproduced")
    for trials, paper in ((1, "64.0"), (3, "96.0")):
        cells = row_of(sr, "-", "Table 10", f"success_rate, T={trials}, task click-widget")
        done = sum(ok and ended <= trials for ok, ended in WIDGET.values()) / len(WIDGET)
        assert cells[5] == str(len(WIDGET)) and cells[6].startswith(f"{pct(done)} [") and cells[7] == paper
    autoplan = table(report["md"], "AutoPlan (Ouyang & Li 2023): the paper's numbers beside the reproduced")
    react = row_of(autoplan, "ReAct (0 Shot)", "Table 3a", "success_rate, type Heat")
    assert react[5] == "1" and react[6] == "0.0 [0.0, 0.0]" and react[9] == "no"  # the Pick game is left out
    heat = row_of(autoplan, "AutoPlan", "Table 3a", "success_rate, type Heat")
    assert heat[6] == "100.0 [100.0, 100.0]" and heat[8] == "+4.0" and heat[9] == "no"


def test_the_index_leads_with_the_answer_above_the_figures_and_folds_nothing(report):
    text = report["index"].read_text()
    titles = re.findall(r"<h[23]>([^<]+)</h[23]>", text)
    figures = titles.index("Figures")
    answer = titles[: titles.index("Figures")]
    assert answer[0] == "The answer"
    papers = [t for t in answer if t.endswith("the paper&#x27;s numbers beside the reproduced")]
    assert len(papers) == 3 and answer[1 : 1 + len(papers)] == papers  # the papers' tables first
    assert "Side by side on webarena (against #1 devils_advocate webarena AR)" in answer
    assert "Which differences are decided (paired test, Holm-corrected)" in answer
    assert "Comparison" in answer
    assert titles.index("Configurations") > figures and titles.index("Failures and errors") > figures
    assert "<details" not in text
    assert text.index("Side by side on webarena") < text.index("<h2>Figures</h2>")


def test_the_markdown_leads_with_the_answer_too(report):
    titles = re.findall(r"^## (.+)$", report["md"], re.M)
    assert titles[0].endswith("the paper's numbers beside the reproduced")
    assert titles.index("Comparison") < titles.index("Configurations")


def test_a_number_no_configuration_reproduced_yet_is_listed_all_the_same(tmp_path):
    folder = tmp_path / "study"
    (folder / "results").mkdir(parents=True)
    (folder / "spec.toml").write_text(SPEC, encoding="utf-8")
    rows = [row("devils_advocate", "webarena", "AR", t, bool(s), plan_revisions=n) for t, (s, n) in AR.items()]
    (folder / "results" / "AR.r1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    logs = tmp_path / "logs"
    assert run_main(["report", str(folder / "results" / "AR.r1.jsonl")], logs=logs, name="r") == 0
    out, _ = output(logs, "r")
    assert "(not run yet)" in out and "Plan+Act" in out
