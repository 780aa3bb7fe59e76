"""The environment protocol every benchmark implements (docs/architecture.md, "Environments").

Graphs only ever talk to environments through this protocol, which is what lets one
graph run on several benchmarks and lets a checkpointed run rebuild its environment
from the JSON snapshot kept in graph state. Three parts:

- ``Env``: reset, step, snapshot, restore, task ids (every env);
- ``Interface``: what an agent is told about the env and how its replies are read (every
  env, as its class attribute ``interface``), so that a method's prompts and parsers are
  written against this view, not against one benchmark;
- capabilities (``JudgedEnv``, ``DisablesElements``, ``HasReferences``, ``TrainingSplits``,
  ``Screenshots``):
  what some envs offer beyond that, as runtime-checkable protocols.
"""

from __future__ import annotations

import abc
import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from envs.datasets import DataInfo

from errors import IntrospectError, UserError

DATA_ROOT = Path(__file__).resolve().parent / "data"  # the shipped benchmark data, one folder per env


@dataclass
class Observation:
    """What the agent sees after a reset, a step or a restore."""

    text: str
    url: str | None = None
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class StepResult:
    """The outcome of one action.

    ``valid`` is False when the env refused the action (its state unchanged) or the action ran
    but did not lead where it asked (a browser env: a dialog answered for the agent, a page that
    did not load); ``feedback`` then says why, in a sentence the agent reads. ``success``: the
    task was accomplished; read only on the step that ends the episode (``done``), where every
    env sets it. ``info`` holds what one env adds (WebShop's reward parts, WebArena's
    evaluators, ALFWorld's admissible commands, the ``evaluation`` a final step may carry).

    A change to the env contract: the three were once keys of ``info`` (``info["valid"]``...).
    An env now sets the fields (keyword-only, after the four positional ones), and a final step
    that does not set ``success`` is a failure, whatever its reward (the stepping node used to
    take a reward of 1 as success then). Nothing stored holds a StepResult (graph state keeps the
    node's own ``Step``; a HotpotQA snapshot keeps its observation's info, where the old keys
    are extras nobody reads), so threads, recordings and results rows written before read the same.
    """

    observation: Observation
    reward: float
    done: bool
    info: dict[str, Any] = field(default_factory=dict)
    valid: bool = field(default=True, kw_only=True)
    feedback: str = field(default="", kw_only=True)
    success: bool = field(default=False, kw_only=True)


class EnvError(UserError, ValueError):
    """Bad input to an environment (unknown env, task or option): a user error, not a bug."""


class UnknownEnvError(EnvError):
    pass


class UnknownTaskError(EnvError):
    pass


class ActionParseError(IntrospectError, ValueError):
    """Model text holding no action of an env's grammar; the message is feedback for the agent."""


@dataclass(frozen=True)
class Interface(abc.ABC):
    """What an agent is told about an env and how its replies are read; method-agnostic.

    ``kind``: "web" (pages with elements to act on) or "text" (a text world, question answering).
    ``intro``: the env's default introduction of its site or world (a task may carry its own in
    ``Observation.info["intro"]``). ``grammar``: the action grammar in words, one bullet per
    form, as a prompt shows it. ``element_ids``: observations carry ids that actions name.
    ``answer_action``: the format of the action that delivers a final answer (``{answer}``
    stands for it), or None when a task ends through ordinary actions. ``verbs``: the words its
    actions start with (what tells an action line from commentary in a reply). ``name``: the env
    whose grammar and screens these are; a method keeps prompts written for one env (its paper's)
    under this name, so that any env speaking the same interface (a test double) gets them too.

    Every env's first observation carries ``info["goal"]``, the task the agent is given, and
    may carry ``info["intro"]`` and ``info["task_type"]``.
    """

    kind: Literal["web", "text"]
    intro: str
    grammar: str
    element_ids: bool = False
    answer_action: str | None = None
    verbs: tuple[str, ...] = ()  # the words an action of the grammar starts with (lower case)
    name: str = ""  # the benchmark whose view this is; prompts written for it sit in prompts/<method>/<name>/

    @abc.abstractmethod
    def parse_action(self, text: str) -> str:
        """One action of the grammar, as the env takes it, read from model text; raises
        ActionParseError (the feedback) when the text holds none. Pure: no live env."""

    def as_written(self, text: str) -> str:
        """Text holding no action of the grammar, as the env reads a command (ALFWorld: lower case,
        single spaces); the env then refuses it with its own feedback. By default unchanged."""
        return text

    def element_signature(self, observation: str, element_id: str) -> tuple[str, ...] | None:
        """What identifies element ``element_id`` on the screen ``observation`` (compared after a
        backtrack to tell whether an id still names the same element); None when the id is not
        on the screen or the env has no element ids."""
        return None

    def action_element(self, action: str) -> str | None:
        """The element id an action of the grammar acts on (a click, a typing), if any."""
        return None

    def with_element(self, action: str, element_id: str) -> str:
        """``action`` acting on element ``element_id`` instead of its own (after element mapping)."""
        return action

    def noted(self, action: str) -> str | None:
        """The text ``action`` notes down for later, when the grammar has a note-taking action
        (WebArena's ``note_down [text]``); None for every other action."""
        return None

    def without_elements(self, observation: str, element_ids: list[str]) -> str:
        """``observation`` as an env that disables ``element_ids`` (DisablesElements) shows it:
        the elements stay, their ids are gone. Unchanged for envs without element ids."""
        return observation

    def irreversible(self, action: str, observation: str) -> bool:
        """Whether ``action`` (in the env's grammar), taken on the screen ``observation``, cannot
        be undone: it buys, sends a form, delivers the answer. A run with ``Context.confirm``
        asks a person before such an action (nodes.runtime.confirm). Default: nothing is irreversible."""
        return False


class Env(abc.ABC):
    """An async benchmark environment.

    Invalid actions never raise: they return a StepResult with ``valid=False`` and a
    ``feedback`` sentence the agent can read (``invalid``). ``interface`` says what an agent is told
    about the env and how its replies are read.
    """

    name: str = ""
    interface: ClassVar[Interface]

    @abc.abstractmethod
    async def reset(self, task_id: str) -> Observation:
        """Start task ``task_id`` and return its first observation."""

    @abc.abstractmethod
    async def step(self, action: str) -> StepResult:
        """Execute one action in the environment's own grammar."""

    @abc.abstractmethod
    async def snapshot(self) -> dict[str, Any]:
        """A JSON-serialisable description that is enough to rebuild the current state."""

    @abc.abstractmethod
    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        """Bring this (fresh or used) instance to the state ``snapshot`` describes."""

    @abc.abstractmethod
    def task_ids(self, split: str | None = None) -> list[str]:
        """The task ids this environment can run, optionally for a named split or suite."""

    async def close(self) -> None:  # noqa: B027 - a default, not abstract: most envs hold nothing
        """Release browsers, processes or files; the default has nothing to release."""

    def data_info(self) -> DataInfo | None:
        """Which data this env runs on (``envs.datasets.data_info``), for results rows; None for
        an env whose tasks live elsewhere (a website). Blocking: call it from a thread."""
        return None

    @classmethod
    def task_fields(cls, task_id: str) -> dict[str, Any]:
        """What a results row carries about task ``task_id`` besides its id, for a report to group
        by (WebArena's ``intent_template_id``); the default: nothing. Blocking (it may read the
        env's task data): ``eval`` asks it once per evaluation, from a thread."""
        return {}

    @classmethod
    def unreachable(cls, task_ids: list[str]) -> str:
        """Why tasks ``task_ids`` cannot run on this machine as it is set up (a live site whose
        URL is not set), in one line naming what to set and what stands in; "" when they can.
        A study asks before it runs. Blocking (it may read the env's task data)."""
        return ""

    @classmethod
    def judge_calls(cls, task_id: str) -> int:
        """The most questions a judge model is asked in one evaluation of task ``task_id`` (for
        a ``JudgedEnv`` with a judge; what a study's estimate bounds): one by default. Blocking
        (it may read the env's task data)."""
        return 1

    def check_task(self, task_id: str) -> None:
        """Raise UnknownTaskError unless ``task_id`` is one of ``task_ids()``."""
        if task_id not in set(self.task_ids()):
            raise UnknownTaskError(f"unknown {self.name} task {task_id!r}")


class Judge(Protocol):
    """A model asked one question by an evaluator; returns the reply text.

    Envs never build model clients: the node that steps an env hands it one of these, bound
    to the run's model (or to the model the env's ``judge`` option names), so the judge's calls
    are counted with the run's own.
    """

    async def __call__(self, prompt: str, *, system: str = "") -> str: ...


@runtime_checkable
class JudgedEnv(Protocol):
    """An env whose scoring may ask a model (WebArena's fuzzy_match, HotpotQA's judge).

    ``judge_model`` says which model should judge: ``"run"`` (the run's own model), a
    ``provider:model`` spec, or None (no judging). The stepping node sets ``judge`` before
    each step; an env with a judge model and no judge reports its verdict as undecided.
    """

    judge_model: str | None
    judge: Judge | None


@runtime_checkable
class DisablesElements(Protocol):
    """An env whose element ids can be disabled (MiniWoB): a disabled id disappears from the
    screen shown and actions on it are refused. Structured Reflection disables the click
    targets that failed at a step (paper 002, Sec. 5.2)."""

    async def set_disabled_ids(self, ids: list[str]) -> Observation:
        """Disable exactly ``ids`` (enabling every other one); returns the screen as now shown."""
        ...


@runtime_checkable
class HasReferences(Protocol):
    """An env that keeps a reference record per task (HotpotQA: the question with its gold answer
    and supporting facts), which a method may show when it learns from a finished attempt."""

    async def reference(self, task_id: str) -> dict[str, Any] | None:
        """The task's reference record, or None when the env has none for it."""
        ...


@runtime_checkable
class Screenshots(Protocol):
    """A browser env that can show a person what is on screen (the agent never sees pixels):
    runs asked to keep screenshots take one after every step, for the trajectory viewer."""

    async def screenshot(self) -> bytes:
        """A PNG of the current page (or the task's area of it)."""
        ...


@runtime_checkable
class TrainingSplits(Protocol):
    """An env with splits meant for training (ALFWorld ``train``/``valid_train``, HotpotQA
    ``train``): a method that learns (AutoPlan) draws its tasks from these only, never from an
    evaluation split."""

    training_splits: tuple[str, ...]


@runtime_checkable
class JournaledEnv(Protocol):
    """An env whose actions reach outside the process (a website that stores what is sent),
    so that a graph step run again after a crash must not do them twice.

    The stepping node calls ``at_step(thread_id, step_id)`` before each step (``step_id`` is
    LangGraph's id of the graph step, the same when a crashed step is run again); ``finish()``
    when the run has finished, so what was kept to resume it can go."""

    def at_step(self, thread_id: str, step_id: str) -> None: ...

    async def finish(self) -> None: ...


def judge_option(value: Any, env: str) -> str | None:
    """Parse an env's ``judge`` option: ``run``, ``off`` or a ``provider:model`` spec."""
    text = str(value).strip() if value is not None else "off"
    if text.lower() in ("off", "none", "false", ""):
        return None
    if text == "run" or (":" in text and all(part.strip() for part in text.split(":", 1))):
        return text
    raise EnvError(f"{env} option judge={value!r}: use run (the run's model), off, or provider:model")


def invalid(observation: Observation, feedback: str, **info: Any) -> StepResult:
    """The StepResult of a refused action: state unchanged, no reward, feedback for the agent."""
    return StepResult(observation, 0.0, False, info, valid=False, feedback=feedback)


# name -> "module:Class"; imported lazily so that, e.g., using WebShop never starts a browser.
ENV_CLASSES: dict[str, str] = {
    "webshop": "envs.webshop:WebShopEnv",
    "miniwob": "envs.miniwob:MiniWoBEnv",
    "webarena": "envs.webarena:WebArenaEnv",
    "alfworld": "envs.alfworld:ALFWorldEnv",
    "hotpotqa": "envs.hotpotqa:HotpotQAEnv",
}


def env_class(name: str) -> type[Env]:
    """The Env subclass registered under ``name``."""
    try:
        target = ENV_CLASSES[name]
    except KeyError:
        raise UnknownEnvError(f"unknown env {name!r}; choose one of: {', '.join(sorted(ENV_CLASSES))}") from None
    module_name, _, class_name = target.partition(":")
    return getattr(importlib.import_module(module_name), class_name)


def make_env(name: str, **options: Any) -> Env:
    """Build the environment registered under ``name`` with its options."""
    cls = env_class(name)
    try:
        return cls(**options)
    except TypeError as exc:
        raise EnvError(f"bad options for env {name!r}: {exc}") from None
