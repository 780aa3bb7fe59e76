"""HotpotQA as ReAct's Wikipedia environment: search[entity], lookup[keyword], finish[answer].

Behaviour follows ReAct's wikienv.py and HotPotQAWrapper (the observations AutoPlan's
prompts expect; AutoPlan adds no feedback of its own for HotpotQA):
- ``search[X]``: the page's first 5 sentences (as the backend splits them), or
  ``Could not find X. Similar: [...]`` with up to 5 titles; a successful search opens the
  page and clears the lookup. The paper says it adds no feedback to ReAct's (Appendix A.3),
  but AutoPlan's code words a miss as its own:
  ``Could not find exact match of "X". Available entities in the database: "A", "B". The
  search API only returns the paragraph if ...`` (option ``augmented_feedback``, which
  AutoPlan's graph sets, as its code words it).
- ``lookup[K]``: ``(Result i / n) <sentence>``, the next sentence of the open page containing K
  (case-insensitive); the same K again moves on; past the last one, ``No more results.``.
- ``finish[A]``: ends the episode, ``Episode finished, reward = <EM>``; reward = exact match,
  ``info`` has ``em``, ``f1``, ``answer``, ``gold`` and ``judge`` (the model judge's verdict, or
  None when the ``judge`` option is off; asked of every answer, an exact match too, as AutoPlan's
  code asks), also gathered in ``info["evaluation"]``. Success is the
  judge's verdict when a judge is set (AutoPlan reports judged accuracy), else EM; a judge set
  but not handed to the env (no model to ask) is an EnvError, never a silent EM.
- ``think[...]``: ``Nice thought.``. Anything else: ``Invalid action: ...`` (valid False).
- A step cap (10, AutoPlan's) ends the episode unanswered.
- Quotes around an argument are dropped (``search["Ed Wood"]`` opens Ed Wood), as AutoPlan's
  original task code does before it calls ReAct's env (``strip('"\'')``); ReAct's own prompts
  never quote, so this changes nothing for them, and EM/F1 ignore punctuation anyway.

Splits (envs.hotpotqa.questions): ``dev`` (or none) is every question of the dev file;
``train`` and ``test`` are the shipped file's last 20 and first 80, or, given the official
training file (``train_questions``, or the installed one beside the installed dev set), the
paper's seeded draw of 50 hard training and 200 dev questions, each drawn when first asked for;
``bridge`` and ``comparison`` filter ``dev`` by type. Every split can be sliced: ``test[:50]``.

What was searched and how the questions were split is in every step's info: ``corpus``,
``comparable`` (False: scores not to be set beside the paper's) and ``caveat`` (why, in
words: "distractor corpus: not comparable with the paper", the split of the shipped sample),
also in the final ``evaluation`` that results rows keep.

Loading the questions and building the corpus block, so the env does them in a worker thread
on first use (``load``, called by reset and restore) and never on the event loop; the
constructor only checks its options. ``task_ids`` is synchronous by the protocol and loads in
the calling thread when nothing is loaded yet.

Backends (envs.hotpotqa.corpus): ``wikipedia`` (the default, as AutoPlan's code searched: the
live API pinned before 2017-10-01, the first 5 sentences split by spaCy; ``api_url``,
``timeout``), ``abstracts`` (HotpotQA's 2017-10-01 abstracts dump, ``wiki_dump`` and
``wiki_index``) or ``local`` (opt-in, for demos and tests: the dev questions' own paragraphs,
offline, which hand the agent the gold pages; a drawn training question searches the drawn
training questions' paragraphs). The state is
small (question, open page, lookup position), so a snapshot holds it directly and restore
needs no search again.
"""

from __future__ import annotations

import asyncio
import re
import threading
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from envs.base import Env, EnvError, Judge, Observation, StepResult, UnknownTaskError, judge_option
from envs.datasets import DataInfo, data_info
from envs.hotpotqa.corpus import Backend, Corpus, LocalWiki, Page
from envs.hotpotqa.dump import AbstractsDump
from envs.hotpotqa.interface import INTERFACE
from envs.hotpotqa.questions import QuestionSet, questions_file, training_file
from envs.hotpotqa.score import exact_match, f1, judged_correct
from envs.hotpotqa.wikipedia import WIKIPEDIA_API, Wikipedia

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
CORPUS_OF: dict[str, Corpus] = {  # what each backend searches
    "local": LocalWiki.corpus,
    "abstracts": AbstractsDump.corpus,
    "wikipedia": Wikipedia.corpus,
}
_LOADING = threading.Lock()  # one thread reads a file and builds its index; the others wait


@lru_cache(maxsize=4)
def _questions(path: str | None, train_path: str | None, seed: int) -> QuestionSet:
    return QuestionSet.load(path, train_path, seed)


@lru_cache(maxsize=4)
def _local_wiki(path: str | None, train_path: str | None, seed: int) -> LocalWiki:
    """The dev file's paragraphs (the shipped split's training questions are among them)."""
    questions = _questions(path, train_path, seed)
    return LocalWiki(questions.by_id[qid] for qid in questions.dev)


@lru_cache(maxsize=4)
def _training_wiki(path: str | None, train_path: str | None, seed: int) -> LocalWiki:
    """The drawn training questions' paragraphs: what a training question searches locally."""
    return LocalWiki(_questions(path, train_path, seed).drawn_training())


@lru_cache(maxsize=2)
def _dump(folder: str, index: str | None) -> AbstractsDump:
    return AbstractsDump(folder, index)


def _integer(value: Any, name: str) -> int:
    """An integer option, or one line saying it is not one."""
    try:
        return int(value)
    except (TypeError, ValueError):
        raise EnvError(f"hotpotqa option {name}={value!r}: expected an integer") from None


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
    """Options: ``backend`` ("wikipedia", the default | "abstracts" | "local"), ``questions`` (a HotpotQA-format
    .json or .json.gz dev file; default the shipped 100 dev questions), ``train_questions`` (the
    official training file: the paper's split, drawn with ``seed``; default the installed one when
    the installed dev set is read), ``max_steps`` (10),
    ``wiki_dump`` (the unpacked abstracts dump folder) and ``wiki_index`` (its SQLite index file)
    for the abstracts backend, ``api_url`` and ``timeout`` (seconds) for the Wikipedia backend,
    ``judge`` (``off`` by default, ``run`` for the run's own model, or ``provider:model``;
    ``judge_model`` is the same option; AutoPlan's paper setting passes its own default),
    ``augmented_feedback`` (False: a search miss reads as ReAct's, as the paper says; True: as
    AutoPlan's code words it)."""

    name = "hotpotqa"
    interface = INTERFACE
    training_splits = ("train",)

    def __init__(
        self,
        *,
        backend: str = "wikipedia",
        questions: str | None = None,
        train_questions: str | None = None,
        seed: int = 0,
        max_steps: int = DEFAULT_MAX_STEPS,
        wiki_dump: str | None = None,
        wiki_index: str | None = None,
        api_url: str = WIKIPEDIA_API,
        timeout: float = 10.0,
        judge: str = "off",
        judge_model: str | None = None,
        augmented_feedback: bool = False,
    ) -> None:
        if backend not in CORPUS_OF:
            raise EnvError(f"unknown hotpotqa backend {backend!r}; use {', '.join(CORPUS_OF)}")
        if backend == "abstracts" and not wiki_dump:
            raise EnvError("hotpotqa backend 'abstracts' needs wiki_dump=FOLDER (the unpacked abstracts dump)")
        if _integer(max_steps, "max_steps") < 1:
            raise EnvError("max_steps must be at least 1")
        self.sources = (
            str(questions) if questions else None,
            str(train_questions) if train_questions else None,
            _integer(seed, "seed"),
        )
        self.backend_name = backend
        self.corpus = CORPUS_OF[backend]
        self._wikipedia = (api_url, float(timeout))
        self._dump = (str(wiki_dump or ""), str(wiki_index) if wiki_index else None)
        self._questions: QuestionSet | None = None
        self._sources: tuple[str, str | None, int] = ("", None, 0)  # the files loaded (``_files``)
        self._backend: Backend | None = None
        self.max_steps = int(max_steps)
        self.judge_model = judge_option(judge_model or judge, self.name)
        self.judge: Judge | None = None
        self.augmented = bool(augmented_feedback)
        self.state = EpisodeState()

    def _files(self) -> tuple[str, str | None, int]:
        """The dev file, the training file (None: the dev file's own split) and the seed: the
        files themselves key the caches, as which ones a default means depends on what is
        installed (blocking: stats)."""
        questions, train_questions, seed = self.sources
        training = training_file(train_questions, questions)
        return str(questions_file(questions)), str(training) if training else None, seed

    def _load(self, task_id: str | None = None) -> None:
        """Read the questions and build the backend; with ``task_id``, make sure it is known,
        drawing the training questions if it is one of them (blocking: a worker thread's job)."""
        if self._questions is not None:
            if task_id is not None:
                self._questions.knows(task_id)
            return
        sources = self._files()
        with _LOADING:
            questions = _questions(*sources)
            backend: Backend
            if self.backend_name == "local":
                backend = _local_wiki(*sources)
            elif self.backend_name == "abstracts":
                backend = _dump(*self._dump)
            else:
                backend = Wikipedia(*self._wikipedia)
        self._backend, self._questions, self._sources = backend, questions, sources
        if task_id is not None:
            questions.knows(task_id)

    def data_info(self) -> DataInfo:
        """The question files it reads (blocking: call from a thread)."""
        questions, training, _ = self._files()
        files = [Path(questions), *([Path(training)] if training else [])]
        return data_info("hotpotqa", files, explicit=bool(self.sources[0]))

    async def load(self, task_id: str | None = None) -> None:
        """Load the questions and the corpus in a worker thread, once; with ``task_id``, also
        draw the training questions when it is one of them (they are read on first use)."""
        if self._questions is None or (task_id is not None and task_id not in self._questions.by_id):
            await asyncio.to_thread(self._load, task_id)

    @property
    def questions(self) -> QuestionSet:
        if self._questions is None:
            self._load()
        assert self._questions is not None
        return self._questions

    @property
    def by_id(self) -> dict[str, dict[str, Any]]:
        """The questions by id (the gold answer and supporting facts AutoPlan's training reads)."""
        return self.questions.by_id

    async def reference(self, task_id: str) -> dict[str, Any] | None:
        """The question record of ``task_id`` (gold answer, supporting facts): ``HasReferences``."""
        await self.load(task_id)
        return self.by_id.get(task_id)

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            self._load()
        assert self._backend is not None
        return self._backend

    def task_ids(self, split: str | None = None) -> list[str]:
        """Question ids. ``split``: None/"dev" (all of the dev file, in order), "train", "test",
        "bridge" or "comparison" (see the module docstring), optionally sliced like a Python
        list: "test[:50]", "dev[50:]", "bridge[0:10]"."""
        match = SPLIT.match((split or "").strip())
        if match is None:
            raise EnvError(
                f"unknown hotpotqa split {split!r}; use dev, train, test, bridge or comparison, e.g. test[:50]"
            )
        kind, start, stop = match.groups()
        questions = self.questions
        ids = questions.train() if kind == "train" else questions.test() if kind == "test" else questions.dev
        if kind in ("bridge", "comparison"):
            ids = [qid for qid in ids if self.by_id[qid].get("type") == kind]
        return ids[int(start) if start else None : int(stop) if stop else None]

    def check_task(self, task_id: str) -> None:
        """Any question is a task: the dev file's and the drawn training ones (blocking when it
        draws them: reset and restore draw in a worker thread first)."""
        if not self.questions.knows(task_id):
            raise UnknownTaskError(f"unknown {self.name} task {task_id!r}")

    def provenance(self) -> dict[str, Any]:
        """What was searched and whether its scores stand beside the paper's (see the module
        docstring): ``corpus``, ``comparable`` and ``caveat`` (empty when there is none)."""
        caveats = [self.corpus.caveat, self.questions.caveat]
        return {
            "corpus": self.corpus.name,
            "comparable": self.corpus.comparable and not self.questions.caveat,
            "caveat": "; ".join(c for c in caveats if c),
        }

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
            **self.provenance(),
        }
        info.update(extra)
        return info

    async def reset(self, task_id: str) -> Observation:
        await self.load(task_id)
        self.check_task(task_id)
        self.state = EpisodeState(task_id=task_id)
        self.state.observation = f"Question: {self._question()['question']}"
        self.state.last_info = self._info()
        return Observation(self.state.observation, info=dict(self.state.last_info))

    async def step(self, action: str) -> StepResult:
        if not self.state.task_id:
            raise EnvError("hotpotqa: call reset(task_id) before step()")
        if self.state.done:
            info = self._info()
            ended = "The episode has ended."
            return StepResult(
                Observation(self.state.observation, info=info), 0.0, True, info, valid=False, feedback=ended
            )
        self.state.steps += 1
        match = ACTION.match(str(action))
        verb, argument = (match.group(1).lower(), _argument(match.group(2))) if match else ("", "")
        reward, feedback, success = 0.0, "", False
        extra: dict[str, Any] = {}
        if verb == "search" and argument:
            text = await self._search(argument)
        elif verb == "lookup" and argument:
            text, feedback = self._lookup(argument)
        elif verb == "finish":
            text, reward, success, extra = await self._finish(argument)
        elif verb == "think":
            text = "Nice thought."
        else:
            feedback = f"{verb}[] needs an argument." if verb else GRAMMAR
            text = f"Invalid action: {str(action).strip()}"
        if not self.state.done and self.state.steps >= self.max_steps:
            self.state.done = True
            unanswered = {"answer": None, "gold": str(self._question()["answer"]), "em": 0.0, "f1": 0.0, "judge": None}
            extra.update(unanswered, stop_reason="max_steps")
            extra["evaluation"] = {**unanswered, "success": False, **self.provenance()}
        self.state.observation = text
        info = self._info(**extra)
        self.state.last_info = info
        return StepResult(
            Observation(text, info=dict(info)),
            reward,
            self.state.done,
            dict(info),
            valid=not feedback,
            feedback=feedback,
            success=success,
        )

    def _searched(self) -> Backend:
        """What this question searches: the backend, or, for a drawn training question on the
        local corpus, the training questions' paragraphs (kept apart, so an evaluation searches
        the same pages whether or not training questions were drawn in this process)."""
        questions = self.questions
        training = questions.training is not None and self.state.task_id not in questions.dev
        if self.backend_name == "local" and training:
            return _training_wiki(*self._sources)
        return self.backend

    async def _search(self, entity: str) -> str:
        backend = await asyncio.to_thread(self._searched)  # the first call builds the training index
        found = await backend.search(entity)
        if found.page is None:
            if self.augmented:
                return NOT_FOUND_AUTOPLAN.format(entity=entity, similar=", ".join(f'"{t}"' for t in found.similar))
            return NOT_FOUND.format(entity=entity, similar=list(found.similar))
        page: Page = found.page
        self.state.page = {"title": page.title, "sentences": list(page.sentences)}
        self.state.lookup_keyword, self.state.lookup_index = None, 0
        return page.opening if page.opening is not None else " ".join(page.sentences[:PAGE_SENTENCES])

    def _lookup(self, keyword: str) -> tuple[str, str]:
        """The observation and, when the lookup is refused, the feedback saying why."""
        if self.state.page is None:
            return "No more results.", "No page is open: search[entity] first."
        if keyword != self.state.lookup_keyword:
            self.state.lookup_keyword, self.state.lookup_index = keyword, 0
        hits = [s for s in self.state.page["sentences"] if keyword.lower() in s.lower()]
        if self.state.lookup_index >= len(hits):
            return "No more results.", ""
        self.state.lookup_index += 1
        return f"(Result {self.state.lookup_index} / {len(hits)}) {hits[self.state.lookup_index - 1]}", ""

    async def _finish(self, answer: str) -> tuple[str, float, bool, dict[str, Any]]:
        """The observation, reward (EM), success and the info of the answer's scoring."""
        question = self._question()
        gold = str(question["answer"])
        em = 1.0 if exact_match(answer, gold) else 0.0
        verdict = None
        if self.judge_model:  # asked on an exact match too, as AutoPlan's code asks
            if self.judge is None:
                raise EnvError(
                    f"hotpotqa: judge={self.judge_model} is set but no judge model was handed to the env "
                    "(run it through a method's graph, or set judge=off for exact match)"
                )
            verdict = await judged_correct(str(question["question"]), gold, answer, self.judge)
        self.state.answer, self.state.done = answer, True
        evaluation = {"answer": answer, "gold": gold, "em": em, "f1": f1(answer, gold), "judge": verdict}
        success = verdict if verdict is not None else em == 1.0
        extra = {
            **evaluation,
            "stop_reason": "finish",
            "evaluation": {**evaluation, "success": success, **self.provenance()},
        }
        return f"Episode finished, reward = {em:g}", em, success, extra

    async def snapshot(self) -> dict[str, Any]:
        return {"env": self.name, "backend": self.backend_name, **self.provenance(), **asdict(self.state)}

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        fields = {k: v for k, v in snapshot.items() if k in EpisodeState.__dataclass_fields__}
        state = EpisodeState(**fields)
        await self.load(state.task_id)
        self.check_task(state.task_id)
        self.state = state
        return Observation(state.observation, info=dict(state.last_info))
