"""Finding, filtering and reading ALFWorld game files (the ``json_2.1.1`` TextWorld-PDDL games).

A data root holds ``json_2.1.1/<split>/<task folder>/<trial>/game.tw-pddl`` the way
``alfworld-download`` lays it out; the project ships a small sample with each file
gzip-compressed (``game.tw-pddl.gz``), and a full download is read as it is. Task ids are
trial folders relative to the root, so they are the same for both forms.

Task types are read from the task folder name (``pick_heat_then_place_in_recep-Egg-None-...``),
which is how ALFWorld names them, so listing the full set never opens its ~3,500 files
except for a few bytes to check the ``solvable`` flag AlfredTWEnv also honours.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from envs.base import DATA_ROOT, EnvError
from envs.datasets import installed

SHIPPED_ROOT = DATA_ROOT / "alfworld"
GAME_FILE = "game.tw-pddl"

# ALFWorld's own type ids 1-6 and names, and the short names people use for them.
TASK_TYPES: tuple[str, ...] = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
SHORT_NAMES: dict[str, str] = {
    "pick": "pick_and_place_simple",
    "put": "pick_and_place_simple",
    "look": "look_at_obj_in_light",
    "examine": "look_at_obj_in_light",
    "light": "look_at_obj_in_light",
    "clean": "pick_clean_then_place_in_recep",
    "heat": "pick_heat_then_place_in_recep",
    "cool": "pick_cool_then_place_in_recep",
    "puttwo": "pick_two_obj_and_place",
    "picktwo": "pick_two_obj_and_place",
    "pick_two": "pick_two_obj_and_place",
}


# Importing the alfworld package sets ALFWORLD_DATA to this (empty) cache dir when unset.
ALFWORLD_DEFAULT_CACHE = Path("~/.cache/alfworld").expanduser()


def chosen_root(data_dir: str | None = None) -> str | None:
    """The games root a person chose: the ``data_dir`` option, else ``$ALFWORLD_DATA``.

    ALFWORLD_DATA pointing at alfworld's default cache without games counts as unset: the
    alfworld package puts that value there itself on import.
    """
    from_env = os.environ.get("ALFWORLD_DATA")
    if from_env and Path(from_env).expanduser() == ALFWORLD_DEFAULT_CACHE:
        from_env = from_env if (ALFWORLD_DEFAULT_CACHE / "json_2.1.1").is_dir() else None
    return data_dir or from_env


def data_root(data_dir: str | None = None) -> Path:
    """The games root: the one chosen (``chosen_root``), else the full games when ``introspect
    data get alfworld`` installed them, else the shipped sample."""
    chosen = chosen_root(data_dir)
    root = Path(chosen).expanduser() if chosen else installed("alfworld") or SHIPPED_ROOT
    if not root.is_dir():
        raise EnvError(f"ALFWorld data directory {str(root)!r} does not exist")
    return root.resolve()


def task_type_of(task_id: str) -> str:
    """The ALFWorld task type of a task id, from its task folder name."""
    folder = Path(task_id).parent.name
    return folder.split("-", 1)[0]


def parse_types(names: str | list[str] | tuple[str, ...] | None) -> frozenset[str]:
    """Task type names (ALFWorld names, ids 1-6 or short names) -> ALFWorld names; empty = all."""
    if not names:
        return frozenset()
    items = names.split(",") if isinstance(names, str) else list(names)
    chosen = set()
    for raw in items:
        name = str(raw).strip().lower()
        if not name:
            continue
        if name.isdigit() and 1 <= int(name) <= len(TASK_TYPES):
            chosen.add(TASK_TYPES[int(name) - 1])
        elif name in TASK_TYPES:
            chosen.add(name)
        elif name in SHORT_NAMES:
            chosen.add(SHORT_NAMES[name])
        else:
            raise EnvError(
                f"unknown ALFWorld task type {raw!r}; use one of {', '.join(sorted(SHORT_NAMES))} or the ALFWorld names"
            )
    return frozenset(chosen)


def _solvable(path: Path) -> bool:
    """The game's ``solvable`` flag; it is the last key, so the tail of the file is enough."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        if path.suffix != ".gz":
            handle.seek(max(0, path.stat().st_size - 200))
            tail = handle.read()
        else:
            tail = handle.read()[-200:]
    match = re.search(rb'"solvable"\s*:\s*(true|false)', tail)
    if match is None:
        return bool(read_game_path(path).get("solvable", False))
    return match.group(1) == b"true"


@lru_cache(maxsize=8)
def all_games(root: Path) -> tuple[str, ...]:
    """Every playable game under ``root`` as a task id, sorted.

    Like AlfredTWEnv: games marked unsolvable and the unsupported 'movable'/'Sliced'
    trajectories are left out.
    """
    found = []
    for dirpath, _dirnames, filenames in os.walk(root):
        name = GAME_FILE if GAME_FILE in filenames else GAME_FILE + ".gz" if GAME_FILE + ".gz" in filenames else None
        if name is None or "movable" in dirpath or "Sliced" in dirpath:
            continue
        if _solvable(Path(dirpath) / name):
            found.append(Path(dirpath).relative_to(root).as_posix())
    return tuple(sorted(found))


def select(root: Path, split: str | None, task_types: frozenset[str]) -> list[str]:
    """Task ids for ``split``: ``None``/``"all"``, a split folder name (``valid_unseen``),
    ``"SPLIT:TYPES"`` (``"valid_unseen:heat"``, ``"valid_train:pick,clean"``), ``":TYPES"``
    or a bare type name when no split folder has that name; ``task_types`` narrows further."""
    games = all_games(root)
    split_name, _, type_part = (split or "").partition(":")
    split_name = split_name.strip()
    splits = {Path(g).parts[1] for g in games if len(Path(g).parts) > 1}
    types = set(parse_types(type_part))
    if split_name and split_name != "all" and split_name not in splits:
        if not type_part:
            try:
                types = set(parse_types(split_name))
                split_name = ""
            except EnvError:
                pass
        if split_name:
            raise EnvError(f"unknown ALFWorld split {split_name!r}; available: {', '.join(sorted(splits))}")
    if task_types:
        types = (types & task_types) if types else set(task_types)
    return [
        g
        for g in games
        if (not split_name or split_name == "all" or Path(g).parts[1] == split_name)
        and (not types or task_type_of(g) in types)
    ]


def game_path(root: Path, task_id: str) -> Path | None:
    """The game file of a task id (plain or gzip-compressed), or None."""
    trial = (root / task_id).resolve()
    if root not in trial.parents:
        return None
    for candidate in (trial / GAME_FILE, trial / (GAME_FILE + ".gz")):
        if candidate.is_file():
            return candidate
    return None


def read_game_path(path: Path) -> dict[str, Any]:
    """The game JSON: ``{pddl_domain, grammar, pddl_problem, solvable}``."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)
