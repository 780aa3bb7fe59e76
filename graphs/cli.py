"""The ``introspect`` command: run, resume, evaluate, train, list graphs, demo.

User errors (unknown method, env or task, a malformed model spec, a missing key, a bad
option) print one line and exit with status 2; a failed run exits 1; nothing is printed
as a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import textwrap
import uuid
from dataclasses import fields
from pathlib import Path
from typing import Any, Callable, NoReturn

from envs.base import EnvError, make_env
from graphs import METHODS, UnknownMethodError, canonical, load_method
from graphs.checkpoint import CheckpointConfigError, open_checkpointer
from graphs.context import Context
from graphs.evaluate import evaluate, finished_tasks
from graphs.runner import ThreadError, drive, resume, thread_metadata
from nodes.llm import ModelCallError, ModelConfigError, check_credentials, parse_spec
from nodes.scripted import ScriptError, load_script
from prompts import PromptError

USER_ERRORS = (EnvError, UnknownMethodError, ModelConfigError, ScriptError, ThreadError,
               CheckpointConfigError, PromptError)
DEMOS = Path(__file__).resolve().parent / "demos"


class UsageError(ValueError):
    pass


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line."""

    def error(self, message: str) -> NoReturn:
        command = " ".join(["introspect", *self.prog.split()[1:], "--help"])
        self.exit(2, f"introspect: {message} (see {command})\n")


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _pairs(items: list[str] | None, what: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{what} expects KEY=VALUE, got {item!r}")
        out[key.strip()] = _value(value)
    return out


def context_from(args: argparse.Namespace, method: str) -> Context:
    """The run's Context from the command line, validated before anything starts."""
    module = load_method(method)
    env = args.env or module.DEFAULT_ENV
    if env not in module.ENVS:
        raise UsageError(f"{method} runs on {', '.join(module.ENVS)}, not {env!r}")
    values: dict[str, Any] = {"env": env, "env_options": _pairs(args.env_option, "--env-option")}
    known = {f.name for f in fields(Context)}
    for key, value in _pairs(args.set, "--set").items():
        if key not in known or key in ("env", "env_options"):
            raise UsageError(f"unknown --set key {key!r}; Context fields: {', '.join(sorted(known))}")
        values[key] = value
    for key in ("model", "temperature", "max_tokens"):
        if getattr(args, key, None) is not None:
            values[key] = getattr(args, key)
    if getattr(args, "plan", None):
        if not hasattr(module, "load_plan"):
            raise UsageError(f"{method} does not take a plan file")
        try:
            values["plan"] = module.load_plan(args.plan)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    context = Context(**values)
    check_model(context.model)
    return context


def check_model(spec: str) -> None:
    provider, name = parse_spec(spec)
    if provider == "scripted":
        load_script(name)
    else:
        check_credentials(spec)


def task_list(context: Context, split: str | None, selection: str | None) -> list[str]:
    """Task ids from ``--tasks`` (``0:50`` slices the split's list; ``a,b`` names ids)."""
    env = make_env(context.env, **context.env_options)
    available = env.task_ids(split)  # task lists are read from data files: no env is started
    if not selection:
        return available
    if ":" in selection and all(p.strip().lstrip("-").isdigit() or not p.strip() for p in selection.split(":")):
        start, _, stop = selection.partition(":")
        return available[int(start) if start.strip() else None: int(stop) if stop.strip() else None]
    wanted = [t.strip() for t in selection.split(",") if t.strip()]
    for task_id in wanted:  # the env decides (MiniWoB accepts any seed of a known task)
        env.check_task(task_id)
    return wanted


def update_printer(method: str) -> Callable[[str, dict[str, Any]], None]:
    """Prints each node update: the method's own one-line account of non-acting nodes
    (its optional ``narrate(node, update)``), the rationale, and every executed action."""
    narrate = getattr(load_method(method), "narrate", None)

    def show(node: str, update: dict[str, Any]) -> None:
        steps = update.get("trajectory") or []
        story = narrate(node, update) if narrate else None
        why = " ".join(str(steps[0].get("rationale", "")).split()) if steps else ""
        text = story or why
        print(f"  {node:<11} {textwrap.shorten(text, 110, placeholder='...') if text else ('' if steps else '·')}".rstrip(),
              flush=True)
        for step in steps:
            mark = "" if step.get("valid", True) else f"  (refused: {step.get('feedback', '')})"
            print(f"  {'':<11} -> {step.get('action', '')}  reward={float(step.get('reward', 0.0)):.2f}{mark}", flush=True)

    return show


def print_outcome(state: dict[str, Any], thread_id: str, finished: bool) -> None:
    usage = state.get("usage") or {}
    print(
        f"{'finished' if finished else 'stopped'}: success={bool(state.get('success'))} "
        f"reward={float(state.get('reward', 0.0)):.3f} steps={state.get('actions', 0)} "
        f"model_calls={usage.get('model_calls', 0)} tokens={usage.get('input_tokens', 0)}+{usage.get('output_tokens', 0)} "
        f"cost=${float(usage.get('cost_usd', 0.0)):.4f}"
        + (f" ({state['stop_reason']})" if state.get("stop_reason") else "")
    )
    print(f"thread: {thread_id}" + ("" if finished else f"  (continue with: introspect resume {thread_id})"))


async def cmd_run(args: argparse.Namespace) -> int:
    method = canonical(args.method)
    context = context_from(args, method)
    env = make_env(context.env, **context.env_options)
    try:
        env.check_task(args.task)
    finally:
        await env.close()
    thread_id = args.thread or f"{method}-{uuid.uuid4().hex[:10]}"
    print(f"thread: {thread_id}  method: {method}  env: {context.env}  task: {args.task}  model: {context.model}", flush=True)
    async with open_checkpointer(args.checkpoint) as saver:
        outcome = await drive(method, context, thread_id, saver, {"task_id": args.task}, update_printer(method))
    print_outcome(outcome.state, thread_id, outcome.finished)
    return 0


async def cmd_resume(args: argparse.Namespace) -> int:
    async with open_checkpointer(args.checkpoint) as saver:
        meta = await thread_metadata(saver, args.thread_id)
        if meta.get("introspect_training"):  # a training thread continues its training loop
            module = load_method(str(meta["introspect_training"]))
            context = Context.from_dict(json.loads(meta["introspect_context"]))
            plan_out = Path(meta["introspect_plan_out"])
            record = await module.train(context, task_ids=[], plan_out=plan_out, checkpointer=saver,
                                        thread_id=args.thread_id, resume=True)
            print_training(record, plan_out)
            return 0
        outcome = await resume(saver, args.thread_id, update_printer(str(meta["introspect_method"])))
    print_outcome(outcome.state, args.thread_id, outcome.finished)
    return 0


async def cmd_eval(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    method = canonical(args.method)
    context = context_from(args, method)
    tasks = task_list(context, args.split, args.tasks)
    results = Path(args.results or f"results/{method}-{context.env}.jsonl")
    bar = tqdm(total=len(tasks), desc=f"{method} on {context.env}", unit="task", file=sys.stderr)
    bar.update(len(finished_tasks(results) & set(tasks)))

    def on_row(row: dict[str, Any]) -> None:
        bar.update(1)
        bar.set_postfix(success=row["success"], reward=f"{row['reward']:.2f}")

    async with open_checkpointer(args.checkpoint) as saver:
        summary = await evaluate(method, context, tasks, results, saver, args.concurrency, on_row)
    bar.close()
    print(f"results: {results}")
    print("\n".join(summary.lines()))
    return 0


async def cmd_train(args: argparse.Namespace) -> int:
    method = canonical(args.method)
    module = load_method(method)
    if not hasattr(module, "train"):
        raise UsageError(f"{method} has no training phase")
    context = context_from(args, method)
    context.batch_size, context.iterations = args.batch, args.iterations
    env = make_env(context.env, **context.env_options)
    split = f"{args.split or ''}:{args.task_type}" if args.task_type else args.split
    tasks = env.task_ids(split)
    if not tasks:
        raise EnvError(f"no {context.env} tasks for split {split!r}")
    plan_out = Path(args.plan_out)
    thread_id = args.thread or f"train-{method}-{uuid.uuid4().hex[:10]}"
    async with open_checkpointer(args.checkpoint) as saver:
        print(f"thread: {thread_id}  training {method} on {len(tasks)} {context.env} tasks: batch "
              f"{context.batch_size}, {context.iterations} iterations", flush=True)
        record = await module.train(context, task_ids=tasks, plan_out=plan_out, checkpointer=saver, thread_id=thread_id)
    print_training(record, plan_out)
    return 0


def print_training(record: dict[str, Any], plan_out: Path) -> None:
    """Per iteration the batch's successes, then the final plan and where it was written."""
    for number, iteration in enumerate(record.get("history") or [], 1):
        jobs = iteration.get("jobs") or []
        wins = sum(1 for job in jobs if job.get("success"))
        print(f"  iteration {number}: {wins}/{len(jobs)} tasks succeeded")
    print("final plan:\n" + textwrap.indent(str(record.get("final_plan", "")).strip() or "(empty)", "  "))
    usage = record.get("usage") or {}
    print(f"model_calls={usage.get('model_calls', 0)} cost=${float(usage.get('cost_usd', 0.0)):.4f}")
    print(f"plans written to {plan_out} (final plan also in {plan_out.with_suffix('.txt')})")


def cmd_graphs(args: argparse.Namespace) -> int:
    for name in METHODS:
        try:
            module = load_method(name)
        except ImportError as exc:
            print(f"{name}: not available ({exc})")
            continue
        nodes = [n for n in module.graph.get_graph().nodes if not n.startswith("__")]
        print(f"{name}  envs: {', '.join(module.ENVS)}  nodes: {', '.join(nodes)}")
        if args.mermaid:
            print(module.graph.get_graph().draw_mermaid())
    return 0


async def cmd_demo(args: argparse.Namespace) -> int:
    """Run a shipped scripted run offline and show the agent moving through its graph."""
    available = sorted(p.stem for p in DEMOS.glob("*.json"))
    name = args.name or "laser"
    if name not in available:
        raise UsageError(f"no demo {name!r}; available: {', '.join(available)}")
    spec = json.loads((DEMOS / f"{name}.json").read_text())
    context = Context(model=f"scripted:{DEMOS / spec['script']}", env=spec["env"], **spec.get("context", {}))
    thread_id = f"demo-{name}-{uuid.uuid4().hex[:8]}"
    print(f"demo: {spec['title']}\n(a scripted model replays {spec['script']}; no key or network needed)\n", flush=True)
    async with open_checkpointer(args.checkpoint or "memory") as saver:
        outcome = await drive(spec["method"], context, thread_id, saver, {"task_id": spec["task_id"]},
                              update_printer(spec["method"]))
    print_outcome(outcome.state, thread_id, outcome.finished)
    return 0


async def cmd_webarena_login(args: argparse.Namespace) -> int:
    """Sign into the WebArena sites (or the local shop) and store the logins the env starts with."""
    from envs import webarena_login
    from envs.browser import close_browser

    folder = Path(args.auth_dir) if args.auth_dir else webarena_login.auth_dir()
    webarena_login.plan(args.site or [], os.environ)  # unknown site, unset URL, missing account: exit 2
    try:
        written = await webarena_login.login(args.site or [], folder)
    except webarena_login.LoginFailed as exc:
        print(f"introspect: {exc}", file=sys.stderr)
        return 1
    finally:
        await close_browser()
    for path in written:
        print(f"signed in: {path}")
    if folder.resolve() != webarena_login.auth_dir().resolve():
        print(f"the webarena env reads logins from {webarena_login.auth_dir()}: set WEBARENA_AUTH_DIR={folder}")
    return 0


def _common(parser: argparse.ArgumentParser, env_default: bool = True) -> None:
    parser.add_argument("--env", help="environment (default: the method's own)")
    parser.add_argument("--model", help="provider:model or scripted:FILE (default openai:gpt-4o-mini)")
    parser.add_argument("--temperature", type=float)
    parser.add_argument("--max-tokens", type=int)
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="any Context field, e.g. --set max_actions=20")
    parser.add_argument("--env-option", action="append", metavar="KEY=VALUE", help="an option of the environment")
    parser.add_argument("--plan", help="plan file (AutoPlan)")
    parser.add_argument("--checkpoint", help="memory | sqlite (default) | sqlite:///FILE | postgresql://...")


def build_parser() -> Parser:
    parser = Parser(prog="introspect", description="Introspective LLM agents as LangGraph graphs.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    run = sub.add_parser("run", help="run one task, streaming each step")
    run.add_argument("method")
    run.add_argument("--task", required=True)
    run.add_argument("--thread", help="thread id (default: a new one)")
    _common(run)
    run.set_defaults(handler=cmd_run)

    res = sub.add_parser("resume", help="continue an interrupted run from its checkpoint")
    res.add_argument("thread_id")
    res.add_argument("--checkpoint")
    res.set_defaults(handler=cmd_resume)

    ev = sub.add_parser("eval", help="evaluate a method on many tasks")
    ev.add_argument("method")
    ev.add_argument("--tasks", help="slice START:STOP of the split's task list, or ids a,b,c")
    ev.add_argument("--split", help="the env's split or suite (e.g. paper-43)")
    ev.add_argument("--concurrency", type=int, default=4)
    ev.add_argument("--results", help="results JSONL (default results/METHOD-ENV.jsonl)")
    _common(ev)
    ev.set_defaults(handler=cmd_eval)

    tr = sub.add_parser("train", help="learn a plan (AutoPlan)")
    tr.add_argument("method")
    tr.add_argument("--task-type", help="only tasks of this type (ALFWorld)")
    tr.add_argument("--split")
    tr.add_argument("--batch", type=int, default=4)
    tr.add_argument("--iterations", type=int, default=3)
    tr.add_argument("--plan-out", default="plans/plan.json")
    tr.add_argument("--thread")
    _common(tr)
    tr.set_defaults(handler=cmd_train)

    gr = sub.add_parser("graphs", help="list the graphs; --mermaid prints their diagrams")
    gr.add_argument("--mermaid", action="store_true")
    gr.set_defaults(handler=cmd_graphs)

    wa = sub.add_parser("webarena", help="WebArena utilities (login)")
    wa_sub = wa.add_subparsers(dest="action", required=True, parser_class=Parser)
    login = wa_sub.add_parser("login", help="sign into the WebArena sites and store the logins tasks start with")
    login.add_argument("--site", action="append", metavar="SITE",
                       help="shopping, shopping_admin, reddit, gitlab or shop; repeat for one combined login "
                            "(default: every configured site and the pairs WebArena uses)")
    login.add_argument("--auth-dir", help="where to write <sites>_state.json (default $WEBARENA_AUTH_DIR or .auth)")
    login.set_defaults(handler=cmd_webarena_login)

    demo = sub.add_parser("demo", help="an offline scripted run")
    demo.add_argument("name", nargs="?", help="which demo (default: laser)")
    demo.add_argument("--checkpoint")
    demo.set_defaults(handler=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        outcome = args.handler(args)
        return asyncio.run(outcome) if asyncio.iscoroutine(outcome) else int(outcome)
    except (UsageError, *USER_ERRORS) as exc:
        print(f"introspect: {exc}", file=sys.stderr)
        return 2
    except ModelCallError as exc:
        print(f"introspect: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("introspect: interrupted; the run is checkpointed and can be resumed", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
