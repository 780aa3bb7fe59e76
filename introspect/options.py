"""Command-line options turned into validated settings, before anything runs.

Everything a command needs from its options is checked here, up front and without
writing anything: the Context (types, ranges and choices from its field metadata), the
model (its provider exists, its key or script is there), the tasks, and where results
go. A bad value is a ``UsageError`` (or the Context's, model's or env's own error): one
line, exit 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import textwrap
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

from envs.base import judge_option, make_env
from errors import UserError
from graphs.method import Method
from introspect.training import load_plan
from nodes.runtime.context import Context, default_model
from nodes.runtime.spec import LOCAL, parse_spec


class UsageError(UserError, ValueError):
    """A command line that asks for something the command cannot do; the message says what instead."""


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def pairs(items: list[str] | None, what: str) -> dict[str, Any]:
    """``KEY=VALUE`` options as a dict, each value read as JSON when it is JSON."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{what} expects KEY=VALUE, got {item!r}")
        out[key.strip()] = _value(value)
    return out


BY_FLAG = ("env", "env_options")  # shared fields --set leaves to --env and --env-option

# command-line flags that set a Context field directly
FLAGS = {
    "model": "model",
    "temperature": "temperature",
    "max_tokens": "max_tokens",
    "batch": "batch_size",
    "iterations": "iterations",
    "confirm": "confirm",
}


def context_from(
    args: argparse.Namespace,
    method: Method,
    base: Context | None = None,
    models: bool = True,
    *,
    model_named: str = "",
) -> Context:
    """The run's settings, in the method's own class, from the command line (over ``base``,
    a thread's own settings, when continuing one), validated and with its model checked
    (``models=False``: its spec's form only, for a dry run that needs no key).

    ``model_named``: how a command that runs many tasks names its model (``--model``); it
    refuses to fall back on the embedded 135M model (``run`` does, saying so), since hundreds
    of tasks on it by accident help no one."""
    settings = method.context
    values: dict[str, Any] = base.to_dict() if base else {}
    if model_named and not getattr(args, "model", None) and not base and default_model() == LOCAL:
        raise UsageError(
            f"no model named and no OPENAI_API_KEY or OPENAI_BASE_URL: name one with {model_named} "
            f"(local runs the embedded 135M model, which solves little; openai:MODEL a real one)"
        )
    env = getattr(args, "env", None) or values.get("env") or method.default_env
    if env not in method.envs:
        raise UsageError(f"{method.name} runs on {', '.join(method.envs)}, not {env!r}")
    values["env"] = env
    if getattr(args, "env_option", None) or not base:
        values["env_options"] = pairs(getattr(args, "env_option", None), "--env-option")
    known = settings.field_names()
    for key, value in pairs(getattr(args, "set", None), "--set").items():
        if key not in known or key in BY_FLAG:
            raise UsageError(f"{method.name} has no setting {key!r}; its settings: {setting_names(settings)}")
        values[key] = value
    for flag, name in FLAGS.items():
        if getattr(args, flag, None) is not None:
            if name not in known:
                raise UsageError(f"{method.name} has no setting {name!r} (--{flag.replace('_', '-')})")
            values[name] = getattr(args, flag)
    if getattr(args, "plan", None):
        if method.training is None:
            raise UsageError(
                f"{method.name} does not take a plan file (only a method with a training phase learns one)"
            )
        try:
            values["plan"] = load_plan(args.plan)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    context = settings(**values)
    if models:
        check_model(context)
    else:
        parse_spec(context.model)
    method.check(context, False)  # settings that contradict each other (AutoPlan's few_shot)
    return context


def shared_settings() -> list[str]:
    """The shared fields ``--set`` takes, in their declared order."""
    return [name for name in Context.field_names() if name not in BY_FLAG]


def settings_help(method: Method) -> str:
    """The method's settings for ``--help``: its own, then the shared ones, each with its default."""
    settings = method.context
    own = {f.name for f in settings.own_fields()}

    def listed(title: str, names: list[str]) -> list[str]:
        lines = [title]
        for spec in (f for f in fields(settings) if f.name in names):
            lines.append(f"  {spec.name}={json.dumps(settings.default(spec.name))}")
            lines += textwrap.wrap(
                str(spec.metadata.get("description", "")), 88, initial_indent=" " * 6, subsequent_indent=" " * 6
            )
        return lines

    shared = shared_settings()
    head = f"settings of {method.name} (--set KEY=VALUE; a value at its default is the same configuration):"
    return "\n".join([*listed(head, sorted(own)), *listed("shared settings:", shared)])


def setting_names(settings: type[Context]) -> str:
    """The fields ``--set`` takes, the method's own first, in one line."""
    own = [f.name for f in settings.own_fields()]
    shared = shared_settings()
    return ", ".join(sorted(own)) + "; shared: " + ", ".join(shared)


async def start_local_models(context: Context) -> None:
    """Start the embedded model's servers (nodes.runtime.local) for the run's model and judge, before
    anything is written: a GGUF file llama.cpp cannot load, or a port in use, is refused here in
    one line. Other specs need nothing started."""
    from nodes.runtime import local

    judge = judge_option(context.env_settings().get("judge"), context.env)
    for spec in dict.fromkeys([context.model, judge]):
        if spec and local.is_local(spec):
            await local.local_model(spec).start()


def check_model(context: Context) -> None:
    """Build the run's model now (cached for the run), and the env's judge model when it
    names one: an unknown provider, a missing package, key or script fails here, before a
    step runs or a checkpoint is written."""
    from nodes.runtime.llm import (  # the model stack (langchain) loads only when a command runs
        JUDGE_MAX_TOKENS,
        ModelConfigError,
        model_for,
    )
    from nodes.runtime.scripted import ScriptedChatModel

    model = model_for(
        context.model, context.temperature, context.max_tokens, timeout=context.timeout, retries=context.retries
    )
    judge = judge_option(context.env_settings().get("judge"), context.env)
    judging = None
    if judge not in (None, "run"):
        try:
            judging = model_for(judge, 0.0, JUDGE_MAX_TOKENS, timeout=context.timeout, retries=context.retries)
        except ModelConfigError as exc:
            raise ModelConfigError(f"the judge model {judge}: {exc} (judge=off scores exact match only)") from None
    for built in (model, judging):
        if isinstance(built, ScriptedChatModel):
            built.load()  # a malformed script is refused here, not at its first call


def called_models(context: Context) -> dict[str, str]:
    """The models a run will call, by the option that sets each (what ``nodes.runtime.served`` asks
    about before the run): the agent's and the env's judge, where one is named."""
    models = {"--model": context.model}
    settings = context.env_settings()
    judge = judge_option(settings.get("judge_model") or settings.get("judge"), context.env)
    if judge not in (None, "run"):
        given = "judge" in context.env_options or "judge_model" in context.env_options
        models["--env-option judge" if given or not hasattr(context, "judge") else "--set judge"] = str(judge)
    return models


def task_list(context: Context, split: str | None, selection: str | None) -> list[str]:
    """Task ids from ``--tasks`` (``0:50`` slices the split's list; ``a,b`` names ids)."""
    env = make_env(context.env, **context.env_settings())
    available = env.task_ids(split)  # task lists are read from data files: no env is started
    if not selection:
        return available
    if ":" in selection and all(p.strip().lstrip("-").isdigit() or not p.strip() for p in selection.split(":")):
        start, _, stop = selection.partition(":")
        bounds = slice(int(start) if start.strip() else None, int(stop) if stop.strip() else None)
        if any(b is not None and abs(b) > len(available) for b in (bounds.start, bounds.stop)):
            raise UsageError(f"--tasks {selection} reaches past the split's {len(available)} tasks")
        chosen = available[bounds]
        if not chosen:
            raise UsageError(f"--tasks {selection} selects no task of the split's {len(available)}")
        return chosen
    wanted = [t.strip() for t in selection.split(",") if t.strip()]
    if not wanted:
        raise UsageError(f"--tasks {selection!r} names no task")
    for task_id in wanted:  # the env decides (MiniWoB accepts any seed of a known task)
        env.check_task(task_id)
    return wanted


def results_path(given: str | None, method: Method, context: Context) -> Path:
    """Where ``eval`` writes its rows (default: results/METHOD-ENV-MODEL.jsonl), checked
    to be a file that can be created, before anything runs."""
    from introspect.evaluate import results_name

    path = Path(given) if given else results_name(method, context)
    if path.is_dir():
        raise UsageError(f"--results {path} is a directory; name a .jsonl file")
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            raise UsageError(f"cannot create results file {path}: {parent} is not a directory")
    if path.exists() and not path.is_file():  # a FIFO would hang the first write, /dev/full fail it
        raise UsageError(f"--results {path} is not a regular file; name a .jsonl file")
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not os.access(existing, os.W_OK):
        raise UsageError(f"cannot write results file {path}: {existing} is not writable")
    return path


def positive(text: str) -> int:
    """argparse type of counts that must be at least 1 (--concurrency)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def positive_amount(text: str) -> float:
    """argparse type of amounts that must be above 0 and finite (a budget's dollars or seconds)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not 0 < value < math.inf:  # nan too
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text}")
    return value


def concurrency_option(text: str) -> int | str:
    """argparse type of --concurrency: a count >= 1, or ``auto`` (introspect.pacing)."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return positive(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1 or auto, got {text!r}") from None


@contextlib.contextmanager
def keeping(args: argparse.Namespace) -> Iterator[None]:
    """The scope of a command in which ``--record FILE`` records every model call
    (nodes.runtime.recording) and ``--screenshots`` keeps the pages' pictures (nodes.runtime.screenshots)."""
    with contextlib.ExitStack() as scope:
        if getattr(args, "record", None):
            from nodes.runtime.recording import recording

            scope.enter_context(recording(args.record))
        if getattr(args, "screenshots", False):
            from introspect.checkpoint import screenshot_folder
            from nodes.runtime.screenshots import SCREENSHOTS

            token = SCREENSHOTS.set(screenshot_folder(args.checkpoint))
            scope.callback(SCREENSHOTS.reset, token)
        yield
