"""The report's arithmetic on small hand-built results rows, each expected figure computed
here by hand: the paired bootstrap, and each paper's table (SR completion at T trials and
Table 8, DA Table 1 and success by episode, LASER Table 1 and length groups, AutoPlan per
task type, HotpotQA scores and cost per question), plus reading results files."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest

from introspect.report.load import (
    ReportInputError,
    configurations,
    read_results,
    read_training,
)
from introspect.report.stats import paired_bootstrap
from introspect.report.tables import comparisons, configurations_table, failures, runs
from nodes.autoplan import report as autoplan
from nodes.da import report as da
from nodes.laser import report as laser
from nodes.sr import report as sr


def row(task: str, method: str = "laser", env: str = "webshop", **fields: Any) -> dict[str, Any]:
    return {
        "task_id": task,
        "method": method,
        "env": env,
        "model": "scripted:x.jsonl",
        "fingerprint": "f1",
        "settings": {},
        "success": False,
        "reward": 0.0,
        "steps": 1,
        "stop_reason": "",
        "model_calls": 1,
        "input_tokens": 10,
        "output_tokens": 2,
        "cost_usd": None,
        "retries": 0,
        "seconds": 1.0,
        "error": "",
        **fields,
    }


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def cells(table, first: str) -> list[str]:
    """The row of ``table`` whose first cells start with ``first`` (joined by '|')."""
    for r in table.rows:
        if "|".join(r).startswith(first):
            return r
    raise AssertionError(f"no row {first!r} in {table.title}: {table.rows}")


# --- the paired bootstrap


def test_bootstrap_of_constant_differences_is_that_constant():
    d = paired_bootstrap([0.0, 1.0, 0.5, 0.2], [0.5, 1.5, 1.0, 0.7])
    assert (d.n, d.mean, d.low, d.high) == (4, pytest.approx(0.5), pytest.approx(0.5), pytest.approx(0.5))


def test_bootstrap_interval_matches_the_normal_approximation_and_is_seeded():
    # 40 tasks: B succeeds on 14 that A failed and fails on 4 that A succeeded; mean difference 10/40
    a = [0.0] * 14 + [1.0] * 4 + [1.0] * 12 + [0.0] * 10
    b = [1.0] * 14 + [0.0] * 4 + [1.0] * 12 + [0.0] * 10
    diffs = [y - x for x, y in zip(a, b)]
    m = statistics.fmean(diffs)
    se = statistics.pstdev(diffs) / math.sqrt(len(diffs))  # the bootstrap's plug-in standard error
    d = paired_bootstrap(a, b)
    assert d.n == 40 and d.mean == pytest.approx(0.25)
    assert d.low == pytest.approx(m - 1.96 * se, abs=0.03) and d.high == pytest.approx(m + 1.96 * se, abs=0.03)
    assert paired_bootstrap(a, b) == d  # seeded: the same report every time


def test_bootstrap_needs_pairs():
    assert paired_bootstrap([], []) is None
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [])


def test_comparison_pairs_the_shared_tasks_of_one_env(tmp_path):
    base = [row(f"t{i}", success=i < 2, reward=float(i < 2)) for i in range(4)]  # 2 of 4
    other = [row(f"t{i}", model="scripted:y.jsonl", success=i < 3, reward=float(i < 3)) for i in range(1, 5)]  # t1..t4
    elsewhere = [row("q", method="autoplan", env="hotpotqa")]
    configs = configurations([write(tmp_path / "a.jsonl", base), write(tmp_path / "b.jsonl", other + elsewhere)])
    [table] = comparisons(configs)  # hotpotqa has one configuration: nothing to compare it with
    shared_a = [1.0, 0.0, 0.0]  # t1, t2, t3 in the base
    shared_b = [1.0, 1.0, 0.0]
    d = paired_bootstrap(shared_a, shared_b)
    assert cells(table, "#2 laser webshop")[4:6] == [
        "3",
        f"{100 * d.mean:+.1f} [{100 * d.low:+.1f}, {100 * d.high:+.1f}]",
    ]
    assert d.mean == pytest.approx(1 / 3)


# --- reading results


def test_a_torn_last_line_is_skipped_and_the_latest_row_of_a_task_wins(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    path.write_text(
        json.dumps(row("1", error="ModelCallError: x"))
        + "\n"
        + json.dumps(row("1", success=True))
        + "\n"
        + json.dumps(row("2"))[:30],
        encoding="utf-8",
    )
    [config] = configurations([path])
    assert [r["success"] for r in config.rows] == [True] and config.label == "#1 laser webshop"
    assert f"{path} line 3 is cut short (a write was interrupted): skipped, 2 rows read" in capsys.readouterr().err


@pytest.mark.parametrize(
    "content,message",
    [
        (None, "results file not found"),
        ("", "holds no results"),
        ("not json\n" + json.dumps(row("1")) + "\n", "is not JSONL: line 1 is not JSON"),
        (
            json.dumps({"content": "a scripted reply"}) + "\n",
            "line 1 is not a results row of `introspect eval` (no task_id",
        ),
        ("[1, 2]\n", "line 1 is not a results row"),
        (
            json.dumps(row("1")) + "\n" + json.dumps(row("2", reward="lots")) + "\n",
            "line 2: reward is 'lots', not a number",
        ),
        (json.dumps(row("1", model_calls=True)) + "\n", "line 1: model_calls is True, not a number"),
    ],
)
def test_unreadable_results_are_refused(tmp_path, content, message):
    path = tmp_path / "r.jsonl"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ReportInputError, match=message.replace("(", r"\(")):
        read_results(path)


def test_a_training_record_must_be_train_s_json(tmp_path):
    (tmp_path / "p.json").write_text(json.dumps({"final_plan": "x"}))
    with pytest.raises(ReportInputError, match="no history"):
        read_training(tmp_path / "p.json")


# --- every report: runs and failures


def test_runs_leave_errors_out_of_the_rate_and_keep_unpriced_cost_unpriced(tmp_path):
    rows = [
        row("1", success=True, reward=1.0, steps=4, cost_usd=0.01, seconds=2.5),
        row("2", reward=0.5, steps=2, cost_usd=0.02, stop_reason="bought", seconds=1.5),
        row("3", error="ModelCallError: gave up", cost_usd=None, stop_reason="", model_calls=3),
    ]
    [config] = configurations([write(tmp_path / "r.jsonl", rows)])
    assert cells(runs([config]), "#1")[1:] == ["3", "2", "1", "50.0", "0.750", "3.0", "5", "30 / 6", "unpriced", "5.0"]
    priced = configurations([write(tmp_path / "p.jsonl", rows[:2])])
    assert cells(runs(priced), "#1")[9] == "$0.0300"
    table = failures([config])
    assert cells(table, "#1 laser webshop|error")[2:4] == ["ModelCallError: gave up", "1"]
    assert cells(table, "#1 laser webshop|failure")[2:5] == ["bought", "1", "2"]


# --- Structured Reflection


def sr_row(task: str, success: bool, trials: int, **fields: Any) -> dict[str, Any]:
    return row(task, "structured_reflection", "miniwob", success=success, trials=trials, **fields)


def test_sr_completion_at_t_trials_per_task_and_category(tmp_path):
    rows = [
        sr_row("click-widget/0", True, 1),
        sr_row("click-widget/1", True, 2),
        sr_row("click-widget/2", True, 4),
        sr_row("click-widget/3", False, 5),
        sr_row("click-checkboxes/0", True, 1),
        sr_row("click-checkboxes/1", True, 3),
        sr_row("click-widget/4", False, 1, error="ScriptError"),
    ]
    [config] = configurations([write(tmp_path / "r.jsonl", rows)])
    per_task, per_category = sr.completion_tables(config)
    # click-widget: 4 seeds ran, completed within 1, 3, 5 trials: 1, 2, 3 of them
    assert cells(per_task, "1-screen-1-step|click-widget") == [
        "1-screen-1-step",
        "click-widget",
        "4",
        "25.0",
        "50.0",
        "75.0",
    ]
    assert cells(per_task, "1-screen-n-step|click-checkboxes")[2:] == ["2", "50.0", "100.0", "100.0"]
    # the overall rate is the mean of the tasks' rates: (25 + 50) / 2 at T=1
    assert cells(per_category, "all") == ["all", "2", "6", "37.5", "75.0", "87.5"]
    assert sr.curve(config, 5) == pytest.approx([0.375, 0.5, 0.75, 0.875, 0.875])


def test_sr_tables_keep_each_alfworld_game_apart(tmp_path):
    """A task id's "/" splits off a MiniWoB++ seed only: ALFWorld's games share their first folder."""
    games = ["json_2.1.1/valid_unseen/pick_a/trial_1", "json_2.1.1/valid_unseen/look_b/trial_2"]
    rows = [row(g, "structured_reflection", "alfworld", success=s, trials=1) for g, s in zip(games, (True, False))]
    [config] = configurations([write(tmp_path / "r.jsonl", rows)])
    per_task, _ = sr.completion_tables(config)
    assert sorted(r[1] for r in per_task.rows) == sorted(games)


def test_a_per_env_setting_shows_the_value_the_run_gave(tmp_path):
    """AutoPlan keeps max_actions per env; the report shows the run's own value, as a study gave it."""
    rows = [row("0", "autoplan", "hotpotqa", settings={"max_actions": {"alfworld": 35, "hotpotqa": 2}})]
    [config] = configurations([write(tmp_path / "r.jsonl", rows)])
    assert config.settings_text == "max_actions=2"


def test_sr_table_8_planning_calls_staged_vs_iterative(tmp_path):
    def trial_rows(planning: str, calls: list[list[int]], won_at: list[int]) -> list[dict[str, Any]]:
        return [
            sr_row(
                f"click-checkboxes-large/{seed}",
                bool(w),
                w or len(c),
                fingerprint=planning,
                settings={} if planning == "staged" else {"planning": "iterative"},
                trial_records=[{"trial": i + 1, "planning_calls": n} for i, n in enumerate(c)],
            )
            for seed, (c, w) in enumerate(zip(calls, won_at))
        ]

    staged = trial_rows("staged", [[1], [2, 1], [1, 1, 1, 1]], [1, 2, 0])
    iterative = trial_rows("iterative", [[5], [6], [4, 4, 4, 4]], [1, 1, 0])
    configs = configurations([write(tmp_path / "s.jsonl", staged), write(tmp_path / "i.jsonl", iterative)])
    table = sr.tables(configs)[-1]
    # T=1 success-only: seed 0 only (seed 1 staged needed 2 trials): IP 5, SP 1; T=3: IP 5+6+12, SP 1+3+3
    assert table.rows == [["click-checkboxes-large", "5", "1", "80.0", "23", "7", f"{100 * (1 - 7 / 23):.1f}"]]


# --- Devil's Advocate


def test_da_table_1_and_success_by_episode(tmp_path):
    rows = [
        row(
            "1",
            "devils_advocate",
            "webarena",
            success=True,
            episodes=1,
            actions_first_episode=4,
            actions_last_episode=4,
            plan_revisions=0,
            backtracks=1,
        ),
        row(
            "2",
            "devils_advocate",
            "webarena",
            success=True,
            episodes=3,
            actions_first_episode=6,
            actions_last_episode=8,
            plan_revisions=2,
            backtracks=0,
        ),
        row(
            "3",
            "devils_advocate",
            "webarena",
            success=False,
            episodes=7,
            actions_first_episode=2,
            actions_last_episode=3,
            plan_revisions=6,
            backtracks=5,
        ),
    ]
    [config] = configurations([write(tmp_path / "r.jsonl", rows)])
    table1, by_episode = da.tables([config])
    assert cells(table1, "#1")[1:] == ["3", "66.7", "4.00", "5.00", "2.67", "2.00"]
    assert cells(by_episode, "#1")[1:] == ["33.3", "33.3", "66.7", "66.7", "66.7", "66.7", "66.7"]


# --- LASER


def test_laser_table_1_on_the_0_100_scale_and_by_length(tmp_path):
    rows = [
        row("1", success=True, reward=1.0, transitions=3),
        row("2", reward=0.5, transitions=5),
        row("3", reward=0.25, transitions=13, backup_used=True),
        row("4", transitions=13, backup_problem="not bought: step cap reached"),
    ]
    [config] = configurations([write(tmp_path / "r.jsonl", rows)])
    main, lengths = laser.tables([config])
    assert cells(main, "#1")[1:] == ["4", "25.0", "43.8", "8.5", "25.0", "1"]
    assert [r[1:] for r in lengths.rows] == [
        ["3 or fewer", "1", "100.0", "100.0"],
        ["4-6", "1", "0.0", "50.0"],
        ["10-13", "1", "0.0", "0.0"],
        ["backup chose", "1", "0.0", "25.0"],
    ]


# --- AutoPlan


def test_autoplan_alfworld_per_task_type(tmp_path):
    def game(kind: str, n: int) -> str:
        return f"json_2.1.1/valid_unseen/{kind}-Apple-None-Fridge-{n}/trial_T2019_{n}"

    rows = [
        row(game("pick_heat_then_place_in_recep", 1), "autoplan", "alfworld", success=True),
        row(game("pick_heat_then_place_in_recep", 2), "autoplan", "alfworld"),
        row(game("look_at_obj_in_light", 3), "autoplan", "alfworld", success=True),
        row(game("pick_two_obj_and_place", 4), "autoplan", "alfworld", error="ScriptError"),
    ]
    [config] = configurations([write(tmp_path / "r.jsonl", rows)])
    table = autoplan.alfworld_table([config])
    assert table.columns[1:] == ["Pick", "Light", "Clean", "Heat", "Cool", "Pick Two", "All"]
    assert cells(table, "#1")[1:] == ["-", "100.0 (1)", "-", "50.0 (2)", "-", "-", "66.7 (3)"]


def test_autoplan_hotpotqa_scores_and_cost_per_question(tmp_path):
    rows = [
        row(
            "a",
            "autoplan",
            "hotpotqa",
            success=True,
            cost_usd=0.02,
            model_calls=4,
            evaluation={"answer": "yes", "em": 1.0, "f1": 1.0, "judge": True},
        ),
        row(
            "b",
            "autoplan",
            "hotpotqa",
            success=True,
            cost_usd=0.04,
            model_calls=6,
            evaluation={"answer": "New York", "em": 0.0, "f1": 0.5, "judge": True, "judged_by": "openai:gpt-4-0314"},
        ),
        row("c", "autoplan", "hotpotqa", cost_usd=0.03, model_calls=8),
    ]  # the step cap: unanswered
    [config] = configurations([write(tmp_path / "r.jsonl", rows)])
    assert cells(autoplan.hotpotqa_table([config]), "#1")[1:] == [
        "3",
        "2",
        "33.3",
        "50.0",
        "66.7",
        "openai:gpt-4-0314",
        "66.7",
        "-",
    ]
    assert cells(autoplan.cost_table([config]), "#1")[1:3] == ["3", "6.0"]
    assert cells(autoplan.cost_table([config]), "#1")[5] == "$0.0300"
    unjudged = configurations(
        [
            write(
                tmp_path / "u.jsonl",
                [row("a", "autoplan", "hotpotqa", evaluation={"answer": "x", "em": 0.0, "f1": 0.0, "judge": None})],
            )
        ]
    )
    assert cells(autoplan.hotpotqa_table(unjudged), "#1")[5] == "-"  # not judged: no accuracy, never 0


def test_autoplan_training_iterations():
    record = {
        "history": [
            {"iteration": 0, "jobs": [{"success": False}, {"success": False}]},
            {"iteration": 1, "jobs": [{"success": True}, {"success": False}]},
        ],
        "cost_per_question": None,
        "usage": {"model_calls": 9},
    }
    assert autoplan.iteration_rates(record) == [0.0, 0.5]
    table = autoplan.training_table("p.json", record)
    assert table.rows == [["1", "2", "0", "0.0"], ["2", "2", "1", "50.0"]] and "unpriced" in table.note


def test_a_configuration_whose_env_gave_a_caveat_is_marked_in_the_report(tmp_path):
    caveat = "distractor corpus: not comparable with the paper"
    paper = {"model": "openai:gpt-4-0314"}  # the model AutoPlan's numbers came from
    local = [row(t, "autoplan", "hotpotqa", caveat=caveat, evaluation={"em": 1.0}, **paper) for t in "ab"]
    pinned = [row("a", "autoplan", "hotpotqa", fingerprint="f2", evaluation={"em": 0.0}, **paper)]
    configs = configurations([write(tmp_path / "r.jsonl", local + pinned)])
    listed = configurations_table(configs)
    assert listed.columns[-1] == "caveat"
    assert cells(listed, "#1")[-1] == caveat and cells(listed, "#2")[-1] == "-"
    scores = autoplan.hotpotqa_table(configs)
    assert cells(scores, "#1")[-1] == caveat and cells(scores, "#2")[-1] == "-"


def test_a_configuration_run_with_another_model_than_its_papers_is_flagged(tmp_path):
    rows = [
        row("a", "laser", model="openai:gpt-4-0613"),
        row("a", "laser", fingerprint="f2", model="openai:gpt-4o-mini"),
        row("a", "devils_advocate", "webarena", fingerprint="f3", caveat="a sample"),
    ]
    listed = configurations_table(configurations([write(tmp_path / "r.jsonl", rows)]))
    assert cells(listed, "#1")[-1] == "-"  # LASER's paper ran gpt-4-0613
    assert cells(listed, "#2")[-1] == "run with openai:gpt-4o-mini, not the paper's openai:gpt-4-0613"
    assert cells(listed, "#3")[-1] == "a sample; run with scripted:x.jsonl, not the paper's openai:gpt-4-0613"
