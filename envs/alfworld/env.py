"""ALFWorld: the real TextWorld-PDDL household games, one game per env instance.

Each game is played by textworld's PDDL engine with ALFWorld's name demangling, exactly as
AlfredTWEnv sets it up, but for one game file instead of a batched gym env. Observations
follow the ReAct-era format the AutoPlan, ReAct and Reflexion prompts were written for:
the "-= Welcome to TextWorld, ALFRED! =-" banner is stripped from the first observation
and "You arrive at loc N. " from arrivals (the raw text stays in ``info["raw"]``).

A command the game refuses (not admissible: the engine would say "Nothing happens.") is
answered with AutoPlan's augmented feedback in the step's ``feedback`` (its kind in
``info["error"]``) and, by default, in the observation as AutoPlan's original shows it:
"Action failed. System Message: You are not at countertop 1. ". Its words are the original
code's by default (``feedback_wording="original"``, envs.alfworld.original_feedback: they
produced the paper's numbers) or the paper's Table 6 (``"table6"``, envs.alfworld.feedback).

ReAct's thought action ``think: ...`` is answered "OK." without touching the game, as ReAct's
runner does (``react_think``, the default); with ``react_think=False`` it goes to the game
like any command, which refuses it, as AutoPlan's original code sends it.

The engine is CPU-bound (about 0.1 s a step, 1-2 s to load a game) and reading games
touches the disk, so everything but bookkeeping runs in a worker thread: finding the data
root and the game file, loading, stepping, replaying and freeing the engine. The
constructor does no I/O (a bad ``data_dir`` is reported by ``task_ids`` or ``reset``), so
the env can be made on the event loop. Each engine instance loads its own copy of
fast-downward's library, so separate envs may run in parallel; one env's calls are
serialised by its lock, which is held until the worker thread ends even when the awaiting task
is cancelled (``_in_thread``).

Splits: ALFWorld's own folders. ``train`` (the full download) and ``valid_train`` are
training splits (``training_splits``; the shipped sample's training games are
``valid_train``); ``valid_seen`` and ``valid_unseen`` are for evaluation (papers report
``valid_unseen``, ALFWorld's out-of-distribution set).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from envs.alfworld import games
from envs.alfworld.feedback import FAILED, SYSTEM, World, explain
from envs.alfworld.interface import INTERFACE
from envs.alfworld.original_feedback import explain_original
from envs.base import Env, EnvError, Observation, StepResult, UnknownTaskError
from envs.datasets import DataInfo, data_info

BANNER = "-= Welcome to TextWorld, ALFRED! =-"
ARRIVAL = re.compile(r"^You arrive at loc \d+\. ")
GOAL = re.compile(r"Your task is to: (.*)$", re.MULTILINE)
NOTHING = "Nothing happens."
GO_TO = "go to "
WORDINGS = ("original", "table6")
DEFAULT_MAX_STEPS = 35
T = TypeVar("T")
# fast-downward's PDDL translator (run when a game is loaded or reset) is plain Python with
# module-level options and it overwrites sys.argv; translations are serialised process-wide
# and sys.argv is put back. Its output depends only on the domain and problem text, and
# textworld translates every game twice on load and twice again on each reset, so results
# are cached per game: a replay (restore) of a game already seen costs no translation.
_TRANSLATE = threading.Lock()
_TRANSLATIONS: OrderedDict[tuple[str, str, bool], Any] = OrderedDict()
_CACHE_SIZE = 64


def _install_translation_cache() -> None:
    import fast_downward

    original = fast_downward.pddl2sas
    if getattr(original, "introspect_cached", False):
        return

    def cached(domain: str, problem: str, verbose: bool = False, optimize: bool = False) -> Any:
        key = (domain, problem, bool(optimize))
        if key not in _TRANSLATIONS:
            _TRANSLATIONS[key] = original(domain, problem, verbose=verbose, optimize=optimize)
            while len(_TRANSLATIONS) > _CACHE_SIZE:
                _TRANSLATIONS.popitem(last=False)
        _TRANSLATIONS.move_to_end(key)
        return _TRANSLATIONS[key]

    # the mark that the cache is installed (read above); mypy does not model a function's own attributes
    cached.introspect_cached = True  # type: ignore[attr-defined]
    fast_downward.pddl2sas = cached


def _translating(call: Any) -> Any:
    """Run an engine call that may translate PDDL: under the lock, sys.argv preserved."""
    with _TRANSLATE:
        argv = list(sys.argv)
        try:
            return call()
        finally:
            sys.argv[:] = argv


def _engine(game: dict[str, Any]) -> Any:
    """A textworld PDDL env for one game, wrapped like AlfredTWEnv does (names demangled)."""
    import textworld
    from textworld.envs.pddl import PddlEnv

    chosen = os.environ.get("ALFWORLD_DATA")
    from alfworld.agents.environment.alfred_tw_env import (
        AlfredDemangler,  # sets ALFWORLD_DATA
    )

    if chosen is None:
        os.environ.pop("ALFWORLD_DATA", None)

    _install_translation_cache()
    infos = textworld.EnvInfos(won=True, admissible_commands=True)
    engine = AlfredDemangler(PddlEnv(infos), shuffle=False)
    _translating(lambda: engine.load(game))
    return engine


def react_text(raw: str) -> str:
    """ALFWorld text as ReAct showed it: no banner, no "You arrive at loc N." prefix."""
    text = raw.strip()
    if text.startswith(BANNER):
        text = "\n".join(part.strip() for part in text.split("\n\n")[1:] if part.strip())
    return ARRIVAL.sub("", text)


class ALFWorldEnv(Env):
    """Options: ``data_dir`` (else $ALFWORLD_DATA, else the games ``introspect data get alfworld``
    installed, else the shipped sample), ``max_steps``
    (35, the paper's), ``task_types`` (filter for ``task_ids``: names, short names or ids
    1-6), ``augmented_feedback`` (True: a refused command's observation is "Action failed.
    System Message: " and the sentence; False: ALFWorld's plain "Nothing happens.", the
    sentence still in ``feedback``), ``feedback_wording`` ("original": AutoPlan's code's
    sentences and order of checks; "table6": the paper's Table 6), ``react_think`` (True:
    ``think: ...`` answers "OK."; False: the game refuses it, as AutoPlan's code has it)."""

    name = "alfworld"
    interface = INTERFACE
    training_splits = ("train", "valid_train")

    def __init__(
        self,
        *,
        data_dir: str | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        task_types: str | list[str] | None = None,
        augmented_feedback: bool = True,
        feedback_wording: str = "original",
        react_think: bool = True,
    ) -> None:
        if int(max_steps) < 1:
            raise EnvError("max_steps must be at least 1")
        if feedback_wording not in WORDINGS:
            raise EnvError(f"alfworld feedback_wording={feedback_wording!r}: use {' or '.join(WORDINGS)}")
        self.data_dir = data_dir
        self._root: Path | None = None
        self.max_steps = int(max_steps)
        self.task_types = games.parse_types(task_types)
        self.augmented = bool(augmented_feedback)
        self.wording = feedback_wording
        self.react_think = bool(react_think)
        self._lock = asyncio.Lock()
        self._engine: Any = None
        self._game_id: str | None = None  # the task the engine has loaded
        self._task_id: str | None = None
        self._state: Any = None  # textworld GameState after the last engine call
        self._actions: list[str] = []  # every action sent since reset, refused ones too
        self._observation = Observation("")
        self._done = False
        self._won = False
        self._goal = ""  # "heat some egg and put it in garbagecan."
        self._went_to = ""  # the last "go to" target the game accepted (World.went_to)

    @property
    def root(self) -> Path:
        """The games root (``alfworld_games.data_root``); blocking on first use."""
        if self._root is None:
            self._root = games.data_root(self.data_dir)
        return self._root

    def data_info(self) -> DataInfo:
        """The game files of the games root (blocking: call from a thread)."""
        root = self.root
        loaded = [games.game_path(root, task) for task in games.all_games(root)]
        return data_info("alfworld", [p for p in loaded if p], explicit=bool(games.chosen_root(self.data_dir)))

    def task_ids(self, split: str | None = None) -> list[str]:
        """Game paths relative to the data root; see alfworld_games.select for ``split``."""
        return games.select(self.root, split, self.task_types)

    def _canonical_task(self, task_id: str) -> str:
        task = str(task_id).strip().strip("/").removesuffix("/" + games.GAME_FILE)
        if games.game_path(self.root, task) is None:
            raise UnknownTaskError(f"unknown alfworld task {task_id!r} (no game under {self.root})")
        return task

    # -- engine calls (run in a worker thread) -------------------------------------------
    def _reset_engine(self, task_id: str) -> None:
        task_id = self._canonical_task(task_id)
        if self._engine is None or self._game_id != task_id:
            path = games.game_path(self.root, task_id)
            assert path is not None
            self._drop_engine()
            self._engine = _engine(games.read_game_path(path))
            self._game_id = task_id
        self._state = _translating(self._engine.reset)
        self._begin(task_id)

    def _engine_step(self, command: str) -> str:
        # textworld renders feedback with one module-level tatsu parser (textgen._PARSER),
        # which is not thread-safe: engines stepped at once (AutoPlan's batch) share the lock.
        with _TRANSLATE:
            self._state, _score, _done = self._engine.step(command)
        return str(self._state.feedback)

    # -- the protocol ----------------------------------------------------------------------
    async def _in_thread(self, call: Callable[..., T], *args: Any) -> T:
        """``call(*args)`` in a worker thread under the env's lock, kept until the thread ends.

        A cancelled task (a budget stop) stops waiting, but its thread runs on: released at
        once, the lock would let ``close`` free the engine's planner state while that thread
        still stepped it (a crash in the C library), or a load finishing late would put an
        engine back on a closed env. So a cancel waits for the thread, then is raised.
        """
        async with self._lock:
            work = asyncio.ensure_future(asyncio.to_thread(call, *args))
            try:
                return await asyncio.shield(work)
            finally:
                while not work.done():  # cancelled: the thread first, however often cancelled again
                    with contextlib.suppress(asyncio.CancelledError):
                        await asyncio.wait([work])

    async def reset(self, task_id: str) -> Observation:
        await self._in_thread(self._reset_engine, task_id)
        return self._observation

    def _begin(self, task: str) -> None:
        self._task_id = task
        self._actions = []
        self._done = self._won = False
        self._went_to = ""
        raw = str(self._state.feedback)
        goal = GOAL.search(raw)
        self._goal = goal.group(1).strip() if goal else ""
        self._observation = Observation(react_text(raw), info=self._info(raw))

    def _info(self, raw: str, **extra: Any) -> dict[str, Any]:
        info: dict[str, Any] = {
            "task_id": self._task_id,
            "task_type": games.task_type_of(self._task_id or ""),
            "goal": self._goal,
            "admissible_commands": list(self._state.admissible_commands),
            "won": bool(self._state.won),
            "steps": len(self._actions),
            "max_steps": self.max_steps,
            "raw": raw,
        }
        info.update(extra)
        return info

    async def step(self, action: str) -> StepResult:
        if self._task_id is None:
            raise EnvError("alfworld: call reset(task_id) before step()")
        return await self._in_thread(self._step, action)

    def _step(self, action: str) -> StepResult:
        """One action (engine thread). Refused actions count towards the step cap too. The game
        reads a command as textworld does, stripped (not otherwise normalised); the original's
        refusals read it as sent, as AutoPlan's code hands its error_msg the command it sent."""
        sent = str(action)
        command = sent.strip()
        if self._done:
            ended = "The episode has ended."
            return StepResult(
                self._observation, 0.0, True, self._info(NOTHING), valid=False, feedback=ended, success=self._won
            )
        self._actions.append(sent)
        extra: dict[str, Any] = {}
        valid, feedback = True, ""
        if self.react_think and command.lower().startswith("think:"):
            raw = text = "OK."  # ReAct's reasoning step: no game effect
        elif command in self._state.admissible_commands:
            raw = self._engine_step(command)
            text = react_text(raw)
            if command.startswith(GO_TO):
                self._went_to = command[len(GO_TO) :]
        else:
            names = {key: entity.name or entity.id for key, entity in self._state["_entity_infos"].items()}
            world = World.from_facts(self._state["_facts"], names)
            world.went_to = self._went_to
            if self.wording == "original":
                why = explain_original(sent, world)
            else:
                why = explain(" ".join(command.split()), world, self._state.admissible_commands)
            raw = NOTHING
            text = FAILED + (SYSTEM + why.sentence if why.sentence else "") if self.augmented else NOTHING
            valid, feedback, extra["error"] = False, why.sentence.strip(), why.error
        self._won = bool(self._state.won)
        out_of_steps = len(self._actions) >= self.max_steps and not self._won
        self._done = self._won or out_of_steps
        if self._done:
            extra["stop_reason"] = "won" if self._won else "max_steps"
        self._observation = Observation(text, info=self._info(raw, **extra))
        return StepResult(
            self._observation,
            1.0 if self._won else 0.0,
            self._done,
            dict(self._observation.info),
            valid=valid,
            feedback=feedback,
            success=self._done and self._won,
        )

    async def snapshot(self) -> dict[str, Any]:
        """The game and every action since reset; restore replays them (JSON, small)."""
        return {
            "env": self.name,
            "task_id": self._task_id,
            "actions": list(self._actions),
            "data_root": str(self.root),
        }

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        task = snapshot.get("task_id")
        if not task:
            raise EnvError("alfworld snapshot has no task_id")
        await self._in_thread(
            self._replay, str(task), snapshot.get("data_root"), [str(a) for a in snapshot.get("actions", [])]
        )
        return self._observation

    def _replay(self, task: str, recorded_root: str | None, actions: list[str]) -> None:
        if recorded_root and Path(recorded_root) != self.root and games.game_path(self.root, task) is None:
            self._root = games.data_root(recorded_root)
        self._reset_engine(task)
        for action in actions:
            self._step(action)

    def _drop_engine(self) -> None:
        """Free the planner state in the engine's private copy of fast-downward's library.

        The copy itself stays mapped: dlclose-ing it crashes the interpreter at exit.
        """
        if self._engine is not None:
            self._engine.unwrapped.downward_lib.cleanup()
        self._engine = self._state = None
        self._game_id = None

    async def close(self) -> None:
        await self._in_thread(self._drop_engine)
        self._task_id = None
