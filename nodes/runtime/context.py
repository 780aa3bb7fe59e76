"""What a run is configured with (LangGraph ``context_schema``): shared fields, one class per method.

``Context`` holds what every run has (the model and how it is asked, the env and its
options, confirmation); each method subclasses it with its own settings (``LaserContext``
in nodes/laser/context.py, ...), and each graph's ``context_schema`` is its method's class,
so Studio and ``introspect run METHOD --help`` show that method's fields and nothing else.
Every field holds its real default, the paper setting's (the original code's where there
is one): a setting given at its default is the same configuration as leaving it out.

Each field says what it accepts in one place, its ``metadata`` (the style of LangGraph's
react-agent template): ``description`` (shown by Studio and ``--help``), ``min`` / ``max``
(inclusive bounds of a number, or of every value of a mapping), ``check`` (a function
raising ValueError on a bad value), and ``results=False`` for settings that cannot change a
run's outcome (timeouts, retries), which the evaluation's fingerprint leaves out. The
annotation gives the type, a ``Literal`` the choices. ``__post_init__`` validates every field
against them, so the CLI, ``from_dict`` and a graph receiving a context from Studio
(LangGraph builds ``MethodContext(**context)``) refuse the same bad values with the same
one-line ``ContextError``. Field metadata on a plain dataclass was kept over pydantic: LangGraph
coerces a dict into either, but a dataclass keeps ``runtime.context`` a plain object whose
fields a subclass can re-default, and the validator is one function of this module.
"""

from __future__ import annotations

import os
import types
import typing
from dataclasses import MISSING, Field, asdict, dataclass, field, fields
from typing import Any, Literal

from errors import UserError
from nodes.runtime.spec import LOCAL, parse_spec


class ContextError(UserError, ValueError):
    """A Context field with a value outside its type, range or choices."""


OPENAI_DEFAULT = "openai:gpt-4o-mini"


def default_model() -> str:
    """The model of a run that names none: OpenAI's where a key or a compatible server is set,
    else the embedded model, so a first run works on a machine with neither."""
    if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
        return OPENAI_DEFAULT
    return LOCAL


def setting(default: Any, description: str, **meta: Any) -> Any:
    """A Context field: its default (a mapping is copied for each instance) and metadata."""
    meta = {"description": description, **meta}
    if isinstance(default, dict):
        return field(default_factory=lambda: dict(default), metadata=meta)
    return field(default=default, metadata=meta)


def temperature(default: float) -> Any:
    """The ``temperature`` field with a method's default (methods sample differently)."""
    return setting(default, "sampling temperature of the method's model calls", min=0.0)


def env(default: str) -> Any:
    """The ``env`` field with a method's default env (its paper's benchmark)."""
    return setting(default, "the environment the method runs on (envs.make_env name)")


@dataclass(kw_only=True)
class Context:
    """What every run needs besides its task: the model, how it is asked, the env."""

    model: str = field(
        default_factory=lambda: default_model(),
        metadata={
            "description": "provider:model (openai:gpt-4o-mini; OpenAI-compatible servers through OPENAI_BASE_URL), "
            "local (the embedded SmolLM2-135M-Instruct on llama.cpp) or gguf:<file.gguf>, or scripted:<file.jsonl> "
            "for offline runs; by default openai:gpt-4o-mini where OPENAI_API_KEY or OPENAI_BASE_URL is set, "
            "else local",
            "check": parse_spec,
        },
    )
    temperature: float = temperature(0.0)
    top_p: float | None = setting(
        None, "nucleus sampling of the method's model calls; null: not sent (the provider's default)", min=0.0, max=1.0
    )
    max_tokens: int = setting(
        512,
        "the token limit of a model call; a method may give some calls their own (AutoPlan's ALFWorld "
        "actions and later thoughts, as its original code: nodes.autoplan.decoding)",
        min=1,
    )
    timeout: float = setting(
        120.0,
        "seconds one model request may take before it counts as failed (and is retried)",
        min=0.001,
        results=False,
    )
    retries: int = setting(
        4,
        "retries of a model request after a 429, a 5xx, a timeout or a dropped connection (the OpenAI "
        "client's own, honouring Retry-After)",
        min=0,
        max=50,
        results=False,
    )
    confirm: bool = setting(
        False,
        "pause before an irreversible step for a person to approve, reject (with a reason the agent reads) "
        "or edit it: WebShop's Buy Now, a form submit or the answer on a web site, AutoPlan's plan update "
        "in training (a LangGraph interrupt; see nodes.runtime.confirm)",
    )
    env: str = env("webshop")
    env_options: dict[str, Any] = setting({}, "options of the environment (envs.make_env keyword arguments)")

    def __post_init__(self) -> None:
        hints = _hints(type(self))
        for spec in fields(self):
            setattr(self, spec.name, _validated(spec, hints[spec.name], getattr(self, spec.name)))

    def env_settings(self) -> dict[str, Any]:
        """The options the run's env is made with: ``env_options``, over whatever defaults the
        method's paper setting gives that env (AutoPlan judges HotpotQA answers by default)."""
        return dict(self.env_options)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def result_settings(self) -> dict[str, Any]:
        """The fields that can change a run's outcome (all but ``results=False`` ones)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("results", True)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> typing.Self:
        """A validated instance from JSON, ignoring keys this class does not have.

        Threads written before the settings were split per method stored every method's
        fields, with ``null`` for "the paper's default": such a null, in a field that now
        holds its default as a real value, takes that default.
        """
        hints = _hints(cls)
        known = {f.name: f for f in fields(cls)}
        kept = {
            key: value
            for key, value in data.items()
            if key in known and not (value is None and not _nullable(hints[key]))
        }
        return cls(**kept)

    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def own_fields(cls) -> list[Field]:
        """The method's own fields: those the shared ``Context`` does not have."""
        shared = set(Context.field_names())
        return [f for f in fields(cls) if f.name not in shared]

    @classmethod
    def default(cls, name: str) -> Any:
        """The default value of field ``name``."""
        spec = {f.name: f for f in fields(cls)}[name]
        if spec.default is MISSING and callable(spec.default_factory):
            return spec.default_factory()
        return spec.default


@dataclass(kw_only=True)
class TrainingContext(Context):
    """The settings of a method with a training phase (graphs.method.Training): the app's
    training driver reads these two."""

    batch_size: int = setting(4, "tasks per training batch", min=1)
    iterations: int = setting(3, "training iterations", min=1)

    def training_models(self) -> dict[str, str]:
        """The models training calls besides the run's, by the option that names each (what
        ``train`` checks are served before it starts); none unless a method says so."""
        return {}


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of a Context class (cached: every instance is validated)."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _nullable(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in typing.get_args(hint)


_KINDS: dict[type, str] = {
    bool: "true or false",
    int: "an integer",
    float: "a number",
    str: "a string",
    dict: "an object",
}


def _validated(spec: Field, hint: Any, value: Any) -> Any:
    """``value`` if it fits the field (a float field also takes an integer), else ContextError."""
    nullable = _nullable(hint)
    (base,) = [o for o in typing.get_args(hint) if o is not type(None)] if nullable else (hint,)
    if value is None and nullable:
        return None
    given, meta = value, spec.metadata
    choices = typing.get_args(base) if typing.get_origin(base) is Literal else None
    kind = typing.get_origin(base) or base
    if choices is not None:
        ok = value in choices
    elif kind is dict and typing.get_args(base)[1:] == (int,):  # a limit per key (AutoPlan's steps per env)
        ok = isinstance(value, dict) and all(_fits(v, int, meta) for v in value.values())
        kind = dict
    else:
        ok = _fits(value, kind, meta)
        value = float(value) if ok and kind is float else value
    if ok and "check" in meta:
        try:
            meta["check"](value)
        except ValueError as exc:
            raise ContextError(f"{spec.name}: {exc}") from None
    if not ok:
        raise ContextError(f"{spec.name}={given!r} is not allowed: expected {_allowed(meta, base, choices, nullable)}")
    return value


def _fits(value: Any, kind: Any, meta: Any) -> bool:
    """Whether ``value`` is a ``kind`` within the field's bounds."""
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    if ok and isinstance(value, (int, float)) and not isinstance(value, bool):
        ok = meta.get("min", value) <= value <= meta.get("max", value)
    return ok


def _allowed(meta: Any, base: Any, choices: Any, nullable: bool) -> str:
    if choices is not None:
        text = "one of " + ", ".join(str(c) for c in choices)
    else:
        kind = typing.get_origin(base) or base
        per_key = kind is dict and typing.get_args(base)[1:] == (int,)
        text = "an object of integers" if per_key else _KINDS.get(kind, getattr(kind, "__name__", str(kind)))
        if "min" in meta and "max" in meta:
            text += f" from {meta['min']} to {meta['max']}"
        elif "min" in meta:
            text += f" >= {meta['min']}"
        elif "max" in meta:
            text += f" <= {meta['max']}"
    return text + (", or null" if nullable else "")
