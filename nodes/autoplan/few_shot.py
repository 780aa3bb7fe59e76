"""ReAct's few-shot examples: the custom prompt of Table 3's ReAct K-shot baselines (paper 004).

"ReAct (K Shot): The custom prompt X consists of K demonstrations manually written by human.
We reuse the demonstrations provided in (Yao et al., 2023). We have K=6 for HotpotQA and K=2
for ALFWorld." So the baseline is AutoPlan's own collection with ReAct's examples where the
plan would be (Context.few_shot), as AutoPlan's original code runs it:

- ALFWorld: the two examples of the game's task type, ``react_<type>_1`` then
  ``react_<type>_0``, from ``alfworld.json``, the file AutoPlan's code reads for this baseline
  (``few_shot="react"``: the examples behind Table 3's numbers), or from
  ``alfworld_3prompts.json`` as ReAct's own runner picks them (``few_shot="react_3prompts"``);
  shown without ReAct's ``> `` prompt marks, as AutoPlan's code shows them. The action is
  taken as the model writes it, without the formalizer (the original's ReAct mode): the
  examples teach ALFWorld's own commands. A ``think: ...`` they also teach goes to the game,
  which refuses it, as in the original (AutoPlanContext.env_settings: ``react_think=False``).
- HotpotQA: ``webthink_simple6`` (6 examples) from ``prompts_naive.json`` for both values; the
  formalizer still turns ``Search[...]`` into the env's grammar, as in the original.

Other envs have no ReAct examples: there the baseline is ReAct zero-shot (no plan, no
examples), and ``few_shot`` other than ``none`` is refused before anything runs.

The files are ReAct's, verbatim, in envs/data/react (MIT; see its README). Reading them is
blocking file I/O, so nodes call ``examples`` (a worker thread, cached).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from envs.base import DATA_ROOT, EnvError

DATA = DATA_ROOT / "react"
NONE = "none"
ALFWORLD_FILES = {"react": "alfworld.json", "react_3prompts": "alfworld_3prompts.json"}
HOTPOTQA_FILE, HOTPOTQA_KEY = "prompts_naive.json", "webthink_simple6"
# ALFWorld task types (envs.alfworld.games.TASK_TYPES) -> ReAct's names in its prompt keys
REACT_TYPES = {
    "pick_and_place_simple": "put",
    "look_at_obj_in_light": "examine",
    "pick_clean_then_place_in_recep": "clean",
    "pick_heat_then_place_in_recep": "heat",
    "pick_cool_then_place_in_recep": "cool",
    "pick_two_obj_and_place": "puttwo",
}


@cache
def _prompts(name: str) -> dict[str, str]:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def _hotpotqa(few_shot: str, task_type: str) -> str:
    return _prompts(HOTPOTQA_FILE)[HOTPOTQA_KEY]


def _alfworld(few_shot: str, task_type: str) -> str:
    kind = REACT_TYPES.get(task_type)
    if kind is None:
        raise EnvError(f"ReAct's ALFWorld examples are per task type; this game has none we know ({task_type!r})")
    table = _prompts(ALFWORLD_FILES[few_shot])
    return (table[f"react_{kind}_1"] + table[f"react_{kind}_0"]).replace("> ", "")


@dataclass(frozen=True)
class Baseline:
    """ReAct's K-shot baseline in one env: its examples (``load(few_shot, task_type)``,
    blocking) and whether its actions go through the formalizer."""

    load: Callable[[str, str], str]
    formalizes: bool


# The envs ReAct wrote examples for (paper Table 3); elsewhere the baseline is zero-shot only.
BASELINES: dict[str, Baseline] = {
    "alfworld": Baseline(_alfworld, formalizes=False),
    "hotpotqa": Baseline(_hotpotqa, formalizes=True),
}


def examples_now(env: str, few_shot: str, task_type: str = "") -> str:
    """The examples for one task (blocking: reads the file once); "" without a baseline."""
    if few_shot == NONE:
        return ""
    return _baseline(env).load(few_shot, task_type)


async def examples(env: str, few_shot: str, task_type: str = "") -> str:
    """``examples_now`` in a worker thread, so the event loop never waits on the disk."""
    if few_shot == NONE:
        return ""
    return await asyncio.to_thread(examples_now, env, few_shot, task_type)


def _baseline(env: str) -> Baseline:
    try:
        return BASELINES[env]
    except KeyError:
        raise EnvError(
            f"ReAct wrote few-shot examples for {' and '.join(BASELINES)} only, not {env}: "
            "use few_shot=none (ReAct zero-shot: no plan) there"
        ) from None


def check(few_shot: str, plan: str, training: bool, env: str) -> None:
    """A baseline's examples take the plan's place at inference: refuse a plan beside them,
    training (which writes plans), and an env ReAct has no examples for, before anything runs."""
    if few_shot not in (NONE, *ALFWORLD_FILES):
        raise EnvError(f"unknown few_shot {few_shot!r}; use none, react or react_3prompts")
    if few_shot != NONE and (training or plan.strip()):
        raise EnvError(
            f"few_shot={few_shot} runs ReAct's baseline in place of a plan: "
            "use it for inference without a plan, not with --plan or in training"
        )
    if few_shot != NONE:
        _baseline(env)


def skips_formalizer(env: str, few_shot: str) -> bool:
    """ALFWorld's ReAct baseline acts without the formalizer (see the module docstring)."""
    return few_shot != NONE and not _baseline(env).formalizes
