"""MiniWoB++ task names, task ids and the suites the project runs.

Why a module of its own: the task list comes from the installed ``miniwob`` package (its 130 task
pages), while the ``paper-43`` suite and its three categories come from paper 002 (Appendix F,
Tables 10-12). Both the env and the Structured Reflection reports need them, without a browser.

Task ids are ``"<task>/<seed>"``; a split is ``"all"``, ``"paper-43"``, one of the three
categories, or a single task name, optionally followed by a seed range: ``@N`` for seeds
0..N-1 (``"paper-43@25"`` is the paper's 43 tasks x 25 seeds) or ``@START:STOP`` for seeds
START..STOP-1, so that validation and test seeds can differ (paper 002, 6.1, tunes prompts on
other seeds than it reports): ``"paper-43@0:10"`` and ``"paper-43@10:60"`` share no task id.
"""

from __future__ import annotations

import re
from pathlib import Path

import miniwob

from envs.base import UnknownTaskError

HTML_ROOT = Path(miniwob.__file__).resolve().parent / "html"
TASK_DIR = HTML_ROOT / "miniwob"

ONE_SCREEN_ONE_STEP = "1-screen-1-step"
ONE_SCREEN_N_STEP = "1-screen-n-step"
N_SCREEN_N_STEP = "n-screen-n-step"
CATEGORIES = (ONE_SCREEN_ONE_STEP, ONE_SCREEN_N_STEP, N_SCREEN_N_STEP)

# Paper 002, Appendix F. The paper's "multi-ordering" and "email-inbox-forward-nl-turn" are the
# package's multi-orderings and email-inbox-forward-nl-turk.
PAPER_43: dict[str, str] = {
    **dict.fromkeys(
        [
            "click-dialog",
            "click-dialog-2",
            "click-link",
            "click-button",
            "click-tab",
            "click-test",
            "click-test-2",
            "click-widget",
            "focus-text",
            "focus-text-2",
        ],
        ONE_SCREEN_ONE_STEP,
    ),
    **dict.fromkeys(
        [
            "click-button-sequence",
            "click-checkboxes",
            "click-checkboxes-large",
            "click-checkboxes-soft",
            "click-checkboxes-transfer",
            "click-collapsible",
            "click-option",
            "click-scroll-list",
            "enter-password",
            "enter-text",
            "enter-text-2",
            "enter-text-dynamic",
            "find-word",
            "login-user",
            "multi-layouts",
            "multi-orderings",
            "read-table",
            "read-table-2",
            "social-media-all",
            "social-media-some",
        ],
        ONE_SCREEN_N_STEP,
    ),
    **dict.fromkeys(
        [
            "click-collapsible-2",
            "click-menu-2",
            "click-pie",
            "click-tab-2",
            "click-tab-2-hard",
            "email-inbox",
            "email-inbox-nl-turk",
            "email-inbox-forward-nl",
            "email-inbox-forward-nl-turk",
            "navigate-tree",
            "search-engine",
            "social-media",
            "use-autocomplete",
        ],
        N_SCREEN_N_STEP,
    ),
}

_SEED_RANGE = re.compile(r"(?:([0-9]+):)?([0-9]+)")


def all_tasks() -> list[str]:
    """Every task page the installed miniwob package ships (130 in miniwob 1.1)."""
    return sorted(p.stem for p in TASK_DIR.glob("*.html"))


def category(task: str) -> str | None:
    """Paper 002's category of ``task`` (None for tasks outside the paper's 43)."""
    return PAPER_43.get(task)


def task_url(task: str) -> str:
    """The file:// URL of a task page."""
    return (TASK_DIR / f"{task}.html").as_uri()


def parse_task_id(task_id: str) -> tuple[str, int]:
    """``"click-test/3"`` -> ``("click-test", 3)``; unknown task or bad seed -> UnknownTaskError."""
    task, sep, seed = task_id.partition("/")
    if not sep:
        task, seed = task_id, "0"
    if not (TASK_DIR / f"{task}.html").is_file() or "/" in seed or not seed.isdigit():
        raise UnknownTaskError(
            f"unknown miniwob task {task_id!r}: use '<task>/<seed>' with one of the "
            f"{len(all_tasks())} tasks of the miniwob package and a seed >= 0"
        )
    return task, int(seed)


def seed_range(split: str, seeds: str) -> range:
    """``"25"`` -> seeds 0..24, ``"10:60"`` -> seeds 10..59; an empty or malformed range is an
    UnknownTaskError that says what is expected."""
    match = _SEED_RANGE.fullmatch(seeds)
    start, stop = (int(match.group(1) or 0), int(match.group(2))) if match else (0, 0)
    if start >= stop:
        raise UnknownTaskError(
            f"bad seed range in miniwob split {split!r}: use @N (seeds 0..N-1) or @START:STOP "
            "(seeds START..STOP-1) with 0 <= START < STOP"
        )
    return range(start, stop)


def split_ids(split: str | None = None) -> list[str]:
    """The task ids of a split (see the module docstring); unknown split -> UnknownTaskError."""
    name, at, seeds_text = (split or "all").partition("@")
    seeds = seed_range(str(split), seeds_text) if at else range(1)
    if name == "all":
        tasks = all_tasks()
    elif name == "paper-43":
        tasks = list(PAPER_43)
    elif name in CATEGORIES:
        tasks = [t for t, c in PAPER_43.items() if c == name]
    elif (TASK_DIR / f"{name}.html").is_file():
        tasks = [name]
    else:
        raise UnknownTaskError(
            f"unknown miniwob split {split!r}: use all, paper-43, {', '.join(CATEGORIES)} "
            "or a task name, optionally with @N or @START:STOP seeds"
        )
    return [f"{task}/{seed}" for task in tasks for seed in seeds]
