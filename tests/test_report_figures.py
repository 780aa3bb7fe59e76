"""The report's figures: one per env, error bars from repeats (the standard error computed here
from the rows), point labels that cover no other label, and no configuration drawn past its
own trial limit. Every expected value is computed here from the rows the test writes."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from matplotlib.container import ErrorbarContainer

from introspect.report import plots
from introspect.report.frontier import frontier
from introspect.report.load import configurations
from nodes.report import Config, Curves

MODEL = "scripted:giveup.jsonl"
# success of each SR task in repeats 1, 2, 3, and the trial each run ended in
SR = {"click-button/1": [1, 1, 0], "click-button/2": [0, 1, 0], "click-test/1": [1, 1, 1], "click-test/2": [0, 0, 1]}
TRIALS = {"click-button/1": 2, "click-button/2": 1, "click-test/1": 1, "click-test/2": 3}


def row(label: str, method: str, env: str, task: str, repeat: int, success: bool, **extra: Any) -> dict[str, Any]:
    return {
        "task_id": task,
        "method": method,
        "env": env,
        "model": MODEL,
        "fingerprint": label,
        "settings": extra.pop("settings", {}),
        "label": label,
        "thread_id": f"eval-{label}-{task}-r{repeat}",
        "success": success,
        "reward": float(success),
        "steps": 2,
        "stop_reason": "" if success else "max_actions",
        "model_calls": 3,
        "input_tokens": 100,
        "output_tokens": 10,
        "cost_usd": None,
        "seconds": 1.0,
        "error": "",
        "repeat": repeat,
        **extra,
    }


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    """SR on MiniWoB++ in three repeats (one run allowed a single trial), and four Devil's
    Advocate configurations on WebShop that all fail at the same cost: one point for four."""
    out = [
        row(label, "structured_reflection", "miniwob", task, repeat, bool(outcomes[repeat - 1]), **extra)
        for label, extra in (("five", {}), ("one", {"settings": {"max_trials": 1}}))
        for task, outcomes in SR.items()
        for repeat in (1, 2, 3)
    ]
    for r in out:
        r["trials"] = 1 if r["label"] == "one" else TRIALS[r["task_id"]]
    out += [row(label, "devils_advocate", "webshop", f"synthetic-{t}", 1, False) for label in "defg" for t in (0, 1)]
    return out


def configs_of(rows: list[dict[str, Any]], tmp_path: Path) -> list[Config]:
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return configurations([path])


def standard_error(values: list[float]) -> float:
    return statistics.stdev(values) / len(values) ** 0.5


def test_every_figure_of_configurations_is_one_env_s(rows, tmp_path):
    written = plots.write(configs_of(rows, tmp_path), {}, tmp_path / "plots")
    assert sorted(p.name for p in written) == sorted(
        [
            "comparison_miniwob.png",
            "comparison_webshop.png",
            "cost_success_miniwob.png",
            "cost_success_webshop.png",
            "sr_trials_miniwob.png",
            "da_episodes_webshop.png",
        ]
    )
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in written)


def test_success_bars_carry_the_standard_error_over_repeats(rows, tmp_path):
    configs = configs_of(rows, tmp_path)
    miniwob = [c for c in configs if c.env == "miniwob"]
    plt = plots._pyplot()
    fig = plots.success_figure(plt, "miniwob", miniwob)
    ax = fig.axes[0]
    assert [t.get_text().split(",")[0] for t in ax.get_yticklabels()] == [c.label for c in miniwob]
    (bars,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    segments = bars.lines[2][0].get_segments()
    five = [r for r in rows if r["label"] == "five"]
    rates = [statistics.mean(r["success"] for r in five if r["repeat"] == k) for k in (1, 2, 3)]
    top = segments[0]  # the first configuration's bar (drawn on top); the other's too (both repeated)
    assert top[0][0] == pytest.approx(100 * (statistics.mean(rates) - standard_error(rates)))
    assert top[1][0] == pytest.approx(100 * (statistics.mean(rates) + standard_error(rates)))
    plt.close(fig)


def test_a_single_repeat_has_no_error_bar(rows, tmp_path):
    webshop = [c for c in configs_of(rows, tmp_path) if c.env == "webshop"]
    plt = plots._pyplot()
    fig = plots.success_figure(plt, "webshop", webshop)
    assert not [c for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer)]
    plt.close(fig)


def test_trial_curves_stop_at_each_run_s_limit_with_error_bars_over_repeats(rows, tmp_path):
    from introspect.report.contents import method_figures

    (curves,) = [f for f in method_figures(configs_of(rows, tmp_path), {}) if f.name == "sr_trials_miniwob"]
    assert isinstance(curves, Curves)
    lines = {key.run_label: values for key, values in curves.lines if isinstance(key, Config)}
    assert len(lines["five"]) == 5 and len(lines["one"]) == 1  # max_trials=1: nothing drawn at T=2..5
    five = {key.run_label: key.number for key, _ in curves.lines if isinstance(key, Config)}["five"]
    for trials in range(1, 6):
        per_repeat = [
            statistics.mean(
                float(r["success"] and TRIALS[r["task_id"]] <= trials)
                for r in rows
                if r["label"] == "five" and r["repeat"] == k
            )
            for k in (1, 2, 3)
        ]
        assert curves.errors[five][trials - 1] == pytest.approx(standard_error(per_repeat))


def test_labels_of_points_at_one_place_are_one_label_and_no_label_covers_another(rows, tmp_path):
    near = [
        {**r, "label": f"near{i}", "fingerprint": f"near{i}", "input_tokens": 100 + i}
        for i in range(1, 4)
        for r in rows
        if r["label"] == "d"
    ]
    webshop = [c for c in configs_of(rows + near, tmp_path) if c.env == "webshop"]
    plt = plots._pyplot()
    fig = plots.cost_success_figure(plt, "webshop", frontier(webshop))
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    labels = [t for t in ax.texts if t.get_text().startswith("#")]
    numbers = [c.number for c in webshop if c.run_label in "defg"]
    assert ", ".join(f"#{n}" for n in numbers) in [t.get_text() for t in labels]  # four configurations, one point
    boxes = [t.get_window_extent(renderer) for t in labels]
    assert len(boxes) == 4  # the shared point and the three near it
    assert not [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :] if a.overlaps(b)]
    plt.close(fig)
