"""The one contract every method declares: ``METHOD = Method(...)`` in its graph module.

The command line, the runner, the evaluation harness, ``introspect graphs``, ``view`` and
``report``, langgraph.json, the documentation's prompt listings and the README's tables are
all derived from these declarations (``graphs.method_named`` finds one by name or alias), so
nothing probes a module for optional functions, the app names no method, and a new method is
its own modules plus one registry line (graphs.METHODS, or an ``introspect.methods`` entry point).

What a method declares for the viewer and the report is plain data and functions the app
calls (``View``, ``Report``), written in nodes.report's vocabulary: a method's modules sit
below the app and never import it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar

from nodes.report import Config, Figure, Table
from nodes.runtime.bound import CallBound
from nodes.runtime.context import Context, TrainingContext
from nodes.runtime.verdicts import Place

if TYPE_CHECKING:  # annotations only: langgraph loads with a method's graph module, not with the registry
    from langgraph.graph.state import CompiledStateGraph

    from envs.base import Env
    from prompts import Templates

    Graph: TypeAlias = CompiledStateGraph[Any, Any, Any, Any]  # its context_schema is the method's Context class

S = TypeVar("S", bound=Mapping[str, Any])  # a graph's state as its callbacks read it (its TypedDict)
C = TypeVar("C", bound=Context)  # the method's settings class (its graphs' context_schema)
T = TypeVar("T", bound=TrainingContext)  # the settings of a method with a training phase

DEFAULT_RECURSION_LIMIT = 2000  # LangGraph supersteps a run may take when the method gives no bound


def _no_narration(node: str, update: dict[str, Any]) -> str | None:
    return None


def _no_check(context: Context, training: bool) -> None:
    return None


def _no_bound(context: Context) -> CallBound | None:
    return None


def _default_recursion_limit(context: Context) -> int:
    return DEFAULT_RECURSION_LIMIT


PAGES = frozenset({"snapshot", "state", "screen", "screens", "observation", "summary"})  # a step card shows its page


def without_pages(records: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Records (a buffer, a stack) without the pages they carry, for a ``View``'s structures:
    the step's card already shows its page once."""
    return [{k: v for k, v in r.items() if k not in PAGES} for r in records or []]


def grown(before: Mapping[str, Any], after: Mapping[str, Any], key: str) -> list[Any]:
    """What list ``key`` gained from one state to the next, for a ``View``'s marks."""
    old, new = before.get(key) or [], after.get(key) or []
    return list(new[len(old) :]) if len(new) > len(old) else []


def _no_structures(states: Sequence[Mapping[str, Any]]) -> list[tuple[str, Any]]:
    return []


def _no_marks(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[tuple[str, str]]:
    return []


def _no_introspection(states: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class View:
    """What ``introspect view`` (introspect.view) shows of a method besides its steps, and what
    ``introspect export --format steps`` (introspect.export) writes of it with each step.

    ``structures`` gets the thread's states so far, oldest first (the checkpoint after the step
    shown is the last), and returns the method's structures as they stood then: (title, value)
    pairs, a value drawn as a table when it is a list of records or a record. ``marks`` gets two
    consecutive states and returns what happened between them that is not a step, as (kind,
    text): a backtrack, a revised plan, an ended trial; the kind names the mark's style.
    ``introspection`` gets the same states as ``structures`` and returns, as JSON, what the
    method thought about the step besides its action: its plan, reflection, remedies (the
    method's own names as keys), for training data on how the method reasons.
    """

    structures: Callable[[Sequence[Mapping[str, Any]]], list[tuple[str, Any]]] = _no_structures
    marks: Callable[[Mapping[str, Any], Mapping[str, Any]], list[tuple[str, str]]] = _no_marks
    introspection: Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]] = _no_introspection


def _no_tables(mine: list[Config], training: Mapping[str, dict[str, Any]] | None = None) -> list[Table]:
    return []


def _no_figures(mine: list[Config], training: Mapping[str, dict[str, Any]] | None = None) -> list[Figure]:
    return []


@dataclass(frozen=True)
class Report:
    """What ``introspect report`` (introspect.report) shows of a method: its paper's tables and
    figures, from its own configurations in the results files (``mine``, at least one unless
    plan records were given) and, for a method with a training phase, the plan records of
    ``introspect train`` (``training``: file name -> record; empty for the others)."""

    tables: Callable[[list[Config], Mapping[str, dict[str, Any]]], list[Table]] = _no_tables
    figures: Callable[[list[Config], Mapping[str, dict[str, Any]]], list[Figure]] = _no_figures


@dataclass(frozen=True)
class Training(Generic[S, T]):
    """A method's training phase (AutoPlan): what the app's training driver needs from it.

    The driver (introspect.training) runs ``graph`` (``build_graph()`` compiled once per
    process) on the tasks ``pool`` draws from the env's training splits, streams every update
    to ``narrate``, writes what ``record`` makes of the final state, and calls ``release`` with
    the latest state when a run stops early; ``introspect view`` shows a training thread as
    ``page`` draws it.
    """

    build_graph: Callable[..., Graph]
    graph: Graph  # compiled once per process, without a checkpointer (Studio adds one)
    pool: Callable[[Env, str | None, str | None], list[str]]  # (env, split, task type) -> task ids
    record: Callable[[S, T], dict[str, Any]]  # final state -> what is written
    release: Callable[[S], Awaitable[None]]  # closes what a stopped run left open
    # `introspect view` of a training thread: (``graph`` bound to its checkpointer, thread id, Context) -> HTML
    page: Callable[[Any, str, T], Awaitable[str]]
    narrate: Callable[[str, dict[str, Any]], str | None] = _no_narration
    envs: tuple[str, ...] = ()  # the envs it trains on: those with training splits (envs.base.TrainingSplits)


def _fired_when_run(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    return True


@dataclass(frozen=True)
class Intervention:
    """One introspective intervention of a method, and the settings that switch it off, for
    ``introspect ablate`` (introspect.ablation): a run's thread is forked before each place the
    intervention happened, the fork runs on with ``off`` over the run's settings, and its outcome
    says what the intervention earned.

    It happens when ``node`` runs and ``fired`` holds of the states before and after that step (by
    default: whenever the node runs; LASER's backtracking is an ``execute`` step that goes back).
    The decision to intervene is taken in that node or by the edge into it, so the fork starts
    at the checkpoint before the step that led to ``node``: that step runs again with ``off``
    in force, and its edge (or the node) decides without the intervention. Every key of ``off``
    is a field of the method's ``context`` (tests/graphs/test_interventions.py holds it)."""

    kind: str  # the name rows and the report give it: "backup", "remedy", "reflection", ...
    node: str  # the node it happens in
    off: Mapping[str, Any]  # the settings that switch it off: {"backup": False}
    what: str  # what it does, in words (the report's and the docs' text)
    fired: Callable[[Mapping[str, Any], Mapping[str, Any]], bool] = _fired_when_run


@dataclass(frozen=True)
class BaseAgent:
    """A method's plain act loop: its graph with every introspective step switched off by
    settings. A study's equal-cost baseline arm (introspect.study.baseline) retries it from a
    fresh start until it has spent what the introspective run spent on the task, so the app
    learns from here, not from its own knowledge of a method, what "without introspection" is."""

    settings: Mapping[str, Any]  # setting -> value, each a field of the method's Context
    summary: str  # what those settings switch off, in a few words (the docs, the report)


@dataclass(frozen=True)
class Method(Generic[S, C]):
    """One introspective method as the framework sees it."""

    name: str  # "laser": the registry key, the CLI's METHOD, langgraph.json's graph name
    title: str  # "LASER"
    summary: str  # what the method does, in a few words (the methods table)
    paper: str  # "Ma et al. 2023"
    build_graph: Callable[..., Graph]  # build_graph(checkpointer=None)
    graph: Graph  # compiled once per process, without a checkpointer (Studio adds one)
    envs: tuple[str, ...]  # every env it runs on
    paper_envs: tuple[str, ...]  # the paper's own setting(s)
    # its settings: the shared Context's fields and its own, each holding the paper setting's
    # default (the default env among them); its graphs' context_schema
    context: type[C]
    result: Callable[[S], dict[str, Any]]  # final state -> per-task fields of evaluation rows
    aliases: tuple[str, ...] = ()
    # the model its paper's numbers came from, as a spec where one names it (the report flags
    # a configuration run with another; its ledger has the row)
    paper_model: str = ""
    recursion_limit: Callable[[C], int] = _default_recursion_limit
    narrate: Callable[[str, dict[str, Any]], str | None] = _no_narration  # one CLI line per node update
    check: Callable[[C, bool], None] = _no_check  # settings that contradict each other (EnvError)
    training: Training[Any, Any] | None = None  # its graph's state is not the method graph's
    # graphs Studio serves (langgraph.json): graph name -> attribute of the method's module
    studio_graphs: Mapping[str, str] = field(default_factory=dict)
    # the paper's baselines, which are this graph with other settings: name -> how to select it
    baselines: Mapping[str, str] = field(default_factory=dict)
    view: View = View()  # its structures and marks in `introspect view`
    report: Report = Report()  # its paper's tables and figures in `introspect report`
    prompts: Templates | None = None  # its prompt folder (prompts.SHIPPED.folder(name) for the shipped methods)
    # its cost structure: the most model calls one task can make under a configuration's limits
    # (nodes.runtime.bound; None: it declares none, and a dry run gives no bound)
    bound: Callable[[C], CallBound | None] = _no_bound
    # the places where it judges its own progress (nodes.runtime.verdicts): its results rows list the
    # verdicts given there beside the outcome, and the report shows how far they can be trusted
    verdicts: tuple[Place, ...] = ()
    # its base agent, retried at equal cost by a study's baseline arm (None: it has none)
    base_agent: BaseAgent | None = None
    # its introspective interventions and the settings that switch each off (``introspect ablate``)
    interventions: tuple[Intervention, ...] = ()

    @property
    def default_env(self) -> str:
        """The env a run takes when none is named: its paper's (the settings' default)."""
        return str(self.context.default("env"))

    def graph_envs(self, graph_name: str) -> tuple[str, ...]:
        """The envs the Studio graph ``graph_name`` (one of ``studio_graphs``) runs on: the
        method's graph runs on ``envs``; its training graph on the envs it trains on."""
        if self.training is None or graph_name == self.name:
            return self.envs
        return self.training.envs
