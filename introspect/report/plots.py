"""The report's PNG figures (matplotlib, Agg backend: no display needed).

Each method's own figures, as it declares them (``Method.report.figures``: completion vs trials
for Structured Reflection, success by episode for Devil's Advocate, the transitions histogram
for LASER, batch success per training iteration from AutoPlan's plan records), drawn here from
their data, then, per env, the success rate per configuration and cost against success with
the Pareto front (any report). Envs share no task, so every figure of configurations is one
env's (``NAME_ENV.png``). A configuration run in several repeats carries error bars: the
standard error over its repeats. Legends name configurations by their labels, wrapped so that
no text is cut off, and point labels are moved apart until none covers another.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from introspect.report import calibration
from introspect.report.contents import method_figures
from introspect.report.frontier import Frontier, frontier
from introspect.report.repeats import repeated
from introspect.report.tables import by_env
from nodes.report import Config, Curves, Histogram, counted

WRAP = 48  # legend and tick label width, in characters


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 11, "axes.titlesize": 12, "figure.dpi": 110})
    return plt


def _wrap(text: str) -> str:
    return "\n".join(textwrap.wrap(text, WRAP)) or text


def legend(config: Config) -> str:
    """A configuration in a legend: its table label, model and settings, wrapped."""
    settings = "" if not config.settings else f", {config.settings_text}"
    return _wrap(f"{config.label}, {config.model_name}{settings}")


def _save(plt: Any, fig: Any, path: Path) -> Path:
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    return path


def _lines(plt: Any, figure: Curves, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, values in figure.lines:
        xs = list(range(1, len(values) + 1))
        (line,) = ax.plot(xs, [100 * v for v in values], marker="o", label=_named(key))
        if isinstance(key, Config) and key.number in figure.errors:
            errors = [100 * e for e in figure.errors[key.number]]
            ax.errorbar(xs, [100 * v for v in values], yerr=errors, fmt="none", ecolor=line.get_color(), capsize=3)
        if isinstance(key, str) and key in figure.spread:
            sd = figure.spread[key]
            low = [100 * (v - d) for v, d in zip(values, sd)]
            ax.fill_between(xs, low, [100 * (v + d) for v, d in zip(values, sd)], color=line.get_color(), alpha=0.2)
    longest = max((len(v) for _, v in figure.lines), default=1)
    ax.set_xticks(range(1, longest + 1))
    ax.set_ylim(-2, 102)
    ax.set(title=figure.title, xlabel=figure.xlabel, ylabel=figure.ylabel)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=9, frameon=False)
    return _save(plt, fig, path)


def write(configs: list[Config], training: dict[str, dict[str, Any]], folder: Path) -> list[Path]:
    """Every figure the data allows, written into ``folder``; returns their paths: per env the
    ones every report has (success per configuration, cost against success), then each
    method's."""
    plt = _pyplot()
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for env, group in by_env(configs).items():
        if ran := [c for c in group if c.ran]:
            out.append(_save(plt, success_figure(plt, env, ran), folder / f"comparison_{env}.png"))
        points = frontier(group)
        if points.points:
            out.append(_save(plt, cost_success_figure(plt, env, points), folder / f"cost_success_{env}.png"))
    for figure in method_figures(configs, training):
        if isinstance(figure, Curves):
            out.append(_lines(plt, figure, folder / f"{figure.name}.png"))
        else:
            out.append(_histogram(plt, figure, folder / f"{figure.name}.png"))
    return out + calibration.write_figures(plt, configs, folder)


def _named(key: Config | str) -> str:
    """A line's legend: a configuration's (``legend``), or a training record's file name."""
    return legend(key) if isinstance(key, Config) else _wrap(key)


def _histogram(plt: Any, figure: Histogram, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    data = [values for _, values in figure.series]
    top = max(max(d) for d in data)
    bins = [x - 0.5 for x in range(top + 2)]
    ax.hist(data, bins=bins, label=[legend(c) for c, _ in figure.series])
    ax.set(title=figure.title, xlabel=figure.xlabel, ylabel=figure.ylabel)
    ax.set_xticks(range(top + 1))
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=9, frameon=False)
    return _save(plt, fig, path)


def success_figure(plt: Any, env: str, configs: list[Config]) -> Any:
    """One env's configurations as bars of their success rate, the mean over repeats, with the
    standard error over the repeats as an error bar (none for a single repeat)."""
    labels = [legend(c) for c in configs]
    height = 1.3 + sum(max(0.5, 0.22 * (label.count("\n") + 1)) for label in labels)
    fig, ax = plt.subplots(figsize=(8, height))
    spreads = [repeated(c).success for c in configs]
    values = [100 * s.mean if s else 0.0 for s in spreads]
    errors = [100 * (s.error or 0.0) if s else 0.0 for s in spreads]
    positions = list(range(len(configs)))[::-1]  # the first configuration on top
    ax.barh(positions, values, color="#5b6fd6")
    if spread := [(v, y, e) for v, y, e in zip(values, positions, errors) if e]:
        at, ys, bars = zip(*spread)
        ax.errorbar(at, ys, xerr=bars, fmt="none", ecolor="#222", capsize=4)
    for y, value, error, c in zip(positions, values, errors, configs):
        shown = f"{value:.1f} ± {error:.1f}%" if error else f"{value:.1f}%"
        ax.text(min(value + error, 100) + 1.5, y, f"{shown} of {counted(c.ran)}", va="center", fontsize=9)
    ax.set_yticks(positions, labels, fontsize=9)
    ax.set_xlim(0, 130)
    ax.set(
        title=f"Success rate per configuration on {env}",
        xlabel="success rate (%), mean over repeats ± standard error, over the tasks that ran",
    )
    return fig


def cost_success_figure(plt: Any, env: str, points: Frontier) -> Any:
    """One point per configuration; the Pareto front's points filled and joined, cheapest first;
    configurations at one point share one label (``#5, #10``)."""
    fig, ax = plt.subplots(figsize=(7, 4.8))
    front = {p.config.number for p in points.front}
    for p in points.points:
        on = p.config.number in front
        ax.scatter(
            p.cost,
            100 * p.success,
            s=70,
            marker="o",
            facecolors="#d6455b" if on else "none",
            edgecolors="#d6455b" if on else "#5b6fd6",
            zorder=3,
            label=legend(p.config),
        )
    ax.step(
        [p.cost for p in points.front],
        [100 * p.success for p in points.front],
        where="post",
        color="#d6455b",
        linewidth=1.2,
        label="Pareto front",
        zorder=2,
    )
    ax.set_ylim(-4, 106)
    ax.set_xlim(0, 1.18 * max(p.cost for p in points.points) or 1.0)  # room for the last point's number
    ax.set(title=f"Cost against success on {env}", xlabel=points.axis, ylabel="success rate (%)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=9, frameon=False)
    at: dict[tuple[float, float], list[int]] = {}
    for p in points.points:
        at.setdefault((p.cost, 100 * p.success), []).append(p.config.number)
    _label_apart(fig, ax, [(xy, ", ".join(f"#{n}" for n in sorted(numbers))) for xy, numbers in at.items()])
    return fig


def _label_apart(fig: Any, ax: Any, labels: list[tuple[tuple[float, float], str]]) -> None:
    """Each label beside its point, moved up (then down) line by line until it covers no label
    placed before it."""
    renderer = fig.canvas.get_renderer()
    placed: list[Any] = []
    for xy, text in labels:
        for offset in (5 + 11 * k for k in (0, 1, -2, 2, -3, 3, -4, 4, -5, 5)):
            note = ax.annotate(text, xy, textcoords="offset points", xytext=(6, offset), fontsize=9)
            box = note.get_window_extent(renderer)
            if not any(box.overlaps(other) for other in placed):
                break
            note.remove()
        else:
            note = ax.annotate(text, xy, textcoords="offset points", xytext=(6, 5), fontsize=9)
            box = note.get_window_extent(renderer)
        placed.append(box)
