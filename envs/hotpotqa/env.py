"""HotpotQA as ReAct's Wikipedia environment: search[entity], lookup[keyword], finish[answer].

Behaviour follows ReAct's wikienv.py and HotPotQAWrapper (the observations AutoPlan's
prompts expect; AutoPlan adds no feedback of its own for HotpotQA):
- ``search[X]``: the page's first 5 sentences, or ``Could not find X. Similar: [...]`` with up
  to 5 titles; a successful search opens the page and clears the lookup. The paper says it
  adds no feedback to ReAct's (Appendix A.3), but AutoPlan's code words a miss as its own:
  ``Could not find exact match of "X". Available entities in the database: "A", "B". The
  search API only returns the paragraph if ...`` (option ``augmented_feedback``).
- ``lookup[K]``: ``(Result i / n) <sentence>``, the next sentence of the open page containing K
  (case-insensitive); the same K again moves on; past the last one, ``No more results.``.
- ``finish[A]``: ends the episode, ``Episode finished, reward = <EM>``; reward = exact match,
  ``info`` has ``em``, ``f1``, ``answer``, ``gold`` and ``judge`` (the model judge's verdict, or
  None when the ``judge`` option is off), also gathered in ``info["evaluation"]``. Success is the
  judge's verdict when a judge answered (AutoPlan reports judged accuracy), else EM.
- ``think[...]``: ``Nice thought.``. Anything else: ``Invalid action: ...`` (valid False).
- A step cap (10, AutoPlan's) ends the episode unanswered.
- Quotes around an argument are dropped (``search["Ed Wood"]`` opens Ed Wood), as AutoPlan's
  original task code does before it calls ReAct's env (``strip('"\'')``); ReAct's own prompts
  never quote, so this changes nothing for them, and EM/F1 ignore punctuation anyway.

Splits: ``dev`` (or none) is every question of the file; ``train`` is its last 20 questions
(at most half of the file), AutoPlan's training split; ``test`` is the rest, so evaluation on
``test`` never sees a training question (the original trains on HotpotQA's train file, which
is not shipped here); ``bridge`` and ``comparison`` filter ``dev`` by type. Every split can be
sliced: ``test[:50]``.

Loading the questions and building the local corpus (SQLite FTS5) block, so the env does them
in a worker thread on first use (``load``, called by reset and restore) and never on the event
loop; the constructor only checks its options. ``task_ids`` is synchronous by the protocol and
loads in the calling thread when nothing is loaded yet.

Backends: ``local`` (default; the questions' own paragraphs, envs.hotpotqa.corpus) or
``wikipedia`` (live API; ``api_url``, ``timeout``). The state is small (question, open page,
lookup position), so a snapshot holds it directly and restore needs no search again.
"""

from __future__ import annotations

import asyncio
import re
import threading
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

from envs.base import Env, EnvError, Judge, Observation, StepResult, judge_option
from envs.datasets import DataInfo, data_info
from envs.hotpotqa.corpus import (
    WIKIPEDIA_API,
    Backend,
    LocalWiki,
    Page,
    Wikipedia,
    load_questions,
    questions_file,
)
from envs.hotpotqa.interface import INTERFACE
from envs.hotpotqa.score import exact_match, f1, judged_correct

ACTION = re.compile(r"^\s*(search|lookup|finish|think)\s*\[(.*)\]\s*$", re.IGNORECASE | re.DOTALL)
GRAMMAR = "Use search[entity], lookup[keyword] or finish[answer]."
NOT_FOUND = "Could not find {entity}. Similar: {similar}."  # ReAct's
NOT_FOUND_AUTOPLAN = (
    'Could not find exact match of "{entity}". Available entities in the database: {similar}. '
    "The search API only returns the paragraph if the search query matches every character "
    "to an entity in the database."
)  # AutoPlan's code (its envs/wikienv.py)
PAGE_SENTENCES = 5
DEFAULT_MAX_STEPS = 10
SPLIT = re.compile(r"^(dev|train|test|bridge|comparison)?(?:\[(-?\d*):(-?\d*)\])?$")
TRAIN_QUESTIONS = 20  # the training split: the file's last 20 questions (at most half of them)
_LOADING = threading.Lock()  # one thread reads a file and builds its index; the others wait


@lru_cache(maxsize=4)
def _questions(path: str) -> tuple[dict[str, Any], ...]:
    return tuple(load_questions(path))


@lru_cache(maxsize=4)
def _local_wiki(path: str) -> LocalWiki:
    return LocalWiki(list(_questions(path)))


def _argument(text: str) -> str:
    """An action's argument without surrounding spaces or quotes (see the module docstring)."""
    return text.strip().strip("\"'").strip()


@dataclass
class EpisodeState:
    """Everything an episode depends on; JSON-serialisable (the snapshot)."""

    task_id: str = ""
    steps: int = 0
    page: dict[str, Any] | None = None  # {"title", "sentences"}
    lookup_keyword: str | None = None
    lookup_index: int = 0
    answer: str | None = None
    done: bool = False
    observation: str = ""
    last_info: dict[str, Any] = field(default_factory=dict)


class HotpotQAEnv(Env):
    """Options: ``backend`` ("local" | "wikipedia"), ``questions`` (a HotpotQA-format .json or
    .json.gz; default the dev set ``introspect data get hotpotqa`` installed, else the shipped
    100 dev questions), ``max_steps`` (10), ``api_url`` and
    ``timeout`` (seconds) for the Wikipedia backend, ``judge`` (``off`` by default, ``run`` for the
    run's own model, or ``provider:model``; ``judge_model`` is the same option),
    ``augmented_feedback`` (False: a search miss reads as ReAct's, as the paper says; True: as
    AutoPlan's code words it)."""

    name = "hotpotqa"
    interface = INTERFACE
    training_splits = ("train",)

    def __init__(
        self,
        *,
        backend: str = "local",
        questions: str | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        api_url: str = WIKIPEDIA_API,
        timeout: float = 10.0,
        judge: str = "off",
        judge_model: str | None = None,
        augmented_feedback: bool = False,
    ) -> None:
        if backend not in ("local", "wikipedia"):
            raise EnvError(f"unknown hotpotqa backend {backend!r}; use 'local' or 'wikipedia'")
        if int(max_steps) < 1:
            raise EnvError("max_steps must be at least 1")
        self.questions_path = str(questions) if questions else None
        self.backend_name = backend
        self._wikipedia = (api_url, float(timeout))
        self._by_id: dict[str, dict[str, Any]] | None = None
        self._backend: Backend | None = None
        self.max_steps = int(max_steps)
        self.judge_model = judge_option(judge_model or judge, self.name)
        self.judge: Judge | None = None
        self.augmented = bool(augmented_feedback)
        self.state = EpisodeState()

    def _load(self) -> None:
        """Read the questions and build the backend (blocking: a worker thread's job)."""
        path = str(questions_file(self.questions_path))
        with _LOADING:
            questions = _questions(path)
            self._backend = _local_wiki(path) if self.backend_name == "local" else Wikipedia(*self._wikipedia)
        self._by_id = {q["_id"]: q for q in questions}

    def data_info(self) -> DataInfo:
        """The questions file (blocking: call from a thread)."""
        return data_info("hotpotqa", [questions_file(self.questions_path)], explicit=bool(self.questions_path))

    async def load(self) -> None:
        """Load the questions and the corpus in a worker thread, once."""
        if self._by_id is None:
            await asyncio.to_thread(self._load)

    @property
    def by_id(self) -> dict[str, dict[str, Any]]:
        """The questions by id (the gold answer and supporting facts AutoPlan's training reads)."""
        if self._by_id is None:
            self._load()
        assert self._by_id is not None
        return self._by_id

    async def reference(self, task_id: str) -> dict[str, Any] | None:
        """The question record of ``task_id`` (gold answer, supporting facts): ``HasReferences``."""
        await self.load()
        return self.by_id.get(task_id)

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            self._load()
        assert self._backend is not None
        return self._backend

    def task_ids(self, split: str | None = None) -> list[str]:
        """Question ids in file order. ``split``: None/"dev" (all), "train", "test", "bridge" or
        "comparison" (see the module docstring), optionally sliced like a Python list:
        "test[:50]", "dev[50:]", "bridge[0:10]"."""
        match = SPLIT.match((split or "").strip())
        if match is None:
            raise EnvError(
                f"unknown hotpotqa split {split!r}; use dev, train, test, bridge or comparison, e.g. test[:50]"
            )
        kind, start, stop = match.groups()
        ids = list(self.by_id)
        held_out = min(TRAIN_QUESTIONS, len(ids) // 2)
        if kind == "train":
            ids = ids[len(ids) - held_out :]
        elif kind == "test":
            ids = ids[: len(ids) - held_out]
        elif kind in ("bridge", "comparison"):
            ids = [qid for qid in ids if self.by_id[qid].get("type") == kind]
        return ids[int(start) if start else None : int(stop) if stop else None]

    def _question(self) -> dict[str, Any]:
        return self.by_id[self.state.task_id]

    def _info(self, **extra: Any) -> dict[str, Any]:
        info = {
            "task_id": self.state.task_id,
            "goal": self._question()["question"],
            "question": self._question()["question"],
            "steps": self.state.steps,
            "max_steps": self.max_steps,
            "page": (self.state.page or {}).get("title"),
            "backend": self.backend_name,
        }
        info.update(extra)
        return info

    async def reset(self, task_id: str) -> Observation:
        await self.load()
        self.check_task(task_id)
        self.state = EpisodeState(task_id=task_id)
        self.state.observation = f"Question: {self._question()['question']}"
        self.state.last_info = self._info()
        return Observation(self.state.observation, info=dict(self.state.last_info))

    async def step(self, action: str) -> StepResult:
        if not self.state.task_id:
            raise EnvError("hotpotqa: call reset(task_id) before step()")
        if self.state.done:
            info = self._info(valid=False, feedback="The episode has ended.")
            return StepResult(Observation(self.state.observation, info=info), 0.0, True, info)
        self.state.steps += 1
        match = ACTION.match(str(action))
        verb, argument = (match.group(1).lower(), _argument(match.group(2))) if match else ("", "")
        reward = 0.0
        extra: dict[str, Any] = {"valid": True}
        if verb == "search" and argument:
            text = await self._search(argument)
        elif verb == "lookup" and argument:
            text, extra = self._lookup(argument)
        elif verb == "finish":
            text, reward, extra = await self._finish(argument)
        elif verb == "think":
            text = "Nice thought."
        else:
            why = f"{verb}[] needs an argument." if verb else GRAMMAR
            text, extra = f"Invalid action: {str(action).strip()}", {"valid": False, "feedback": why}
        if not self.state.done and self.state.steps >= self.max_steps:
            self.state.done = True
            extra.update(success=False, em=0.0, f1=0.0, answer=None, stop_reason="max_steps")
        self.state.observation = text
        info = self._info(**extra)
        self.state.last_info = info
        return StepResult(Observation(text, info=dict(info)), reward, self.state.done, dict(info))

    async def _search(self, entity: str) -> str:
        found = await self.backend.search(entity)
        if found.page is None:
            if self.augmented:
                return NOT_FOUND_AUTOPLAN.format(entity=entity, similar=", ".join(f'"{t}"' for t in found.similar))
            return NOT_FOUND.format(entity=entity, similar=list(found.similar))
        page: Page = found.page
        self.state.page = {"title": page.title, "sentences": list(page.sentences)}
        self.state.lookup_keyword, self.state.lookup_index = None, 0
        return " ".join(page.sentences[:PAGE_SENTENCES])

    def _lookup(self, keyword: str) -> tuple[str, dict[str, Any]]:
        if self.state.page is None:
            return "No more results.", {"valid": False, "feedback": "No page is open: search[entity] first."}
        if keyword != self.state.lookup_keyword:
            self.state.lookup_keyword, self.state.lookup_index = keyword, 0
        hits = [s for s in self.state.page["sentences"] if keyword.lower() in s.lower()]
        if self.state.lookup_index >= len(hits):
            return "No more results.", {"valid": True}
        self.state.lookup_index += 1
        return f"(Result {self.state.lookup_index} / {len(hits)}) {hits[self.state.lookup_index - 1]}", {"valid": True}

    async def _finish(self, answer: str) -> tuple[str, float, dict[str, Any]]:
        question = self._question()
        gold = str(question["answer"])
        em = 1.0 if exact_match(answer, gold) else 0.0
        verdict = None
        if self.judge_model and self.judge is not None:
            verdict = await judged_correct(str(question["question"]), gold, answer, self.judge)
        self.state.answer, self.state.done = answer, True
        evaluation = {"answer": answer, "gold": gold, "em": em, "f1": f1(answer, gold), "judge": verdict}
        success = verdict if verdict is not None else em == 1.0
        extra = {
            "valid": True,
            **evaluation,
            "success": success,
            "stop_reason": "finish",
            "evaluation": {**evaluation, "success": success},
        }
        return f"Episode finished, reward = {em:g}", em, extra

    async def snapshot(self) -> dict[str, Any]:
        return {"env": self.name, "backend": self.backend_name, **asdict(self.state)}

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        fields = {k: v for k, v in snapshot.items() if k in EpisodeState.__dataclass_fields__}
        state = EpisodeState(**fields)
        await self.load()
        self.check_task(state.task_id)
        self.state = state
        return Observation(state.observation, info=dict(state.last_info))
