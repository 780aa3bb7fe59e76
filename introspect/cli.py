"""The ``introspect`` command: run, resume, evaluate, train, study, serve, list graphs, history,
fork, view, report, export, data, demo.

Exit status: 0 when the command did its work; 2 for bad input (unknown method, env or
task, a malformed or unknown model, a missing key, a setting out of range, an unusable
checkpointer or results path, an existing thread id, a refused ``data get``), reported in one
line before anything runs or is written; 1 when a model gave up (the run is checkpointed and
the line says how to resume it) or, for ``eval`` and ``study run``, when any task errored; 3 when
a budget stopped a study (introspect.study.command). Which errors are
which is the errors' own say (``errors.IntrospectError.exit_status``: every ``UserError`` is
exit 2); only an error that means a bug is shown with its traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any, NoReturn

from envs.base import make_env
from envs.datasets import HOME
from errors import IntrospectError
from graphs import UnknownMethodError, compiled, method_named, registry, studio_graphs
from graphs.method import Method
from introspect.asking import answer_all
from introspect.checkpoint import default_url, open_checkpointer, thread_exists
from introspect.console import (
    matrix_text,
    print_outcome,
    print_training,
    training_printer,
    update_printer,
)
from introspect.gaveup import errored_line, in_memory, resumable, resume_command
from introspect.options import (
    UsageError,
    called_models,
    concurrency_option,
    context_from,
    keeping,
    positive,
    results_path,
    settings_help,
    start_local_models,
    task_list,
)
from introspect.runner import (
    ThreadError,
    drive,
    fork,
    outcome_of,
    resume,
    thread_context,
    thread_metadata,
    thread_method,
)
from introspect.stopping import Stop, stopping_on_signals
from nodes.runtime.context import Context, TrainingContext

# The model stack (nodes.runtime.llm, langchain) and the graphs (langgraph) are imported by the
# commands that use them, not here: `introspect --help` and a mistyped option then answer
# in a few hundredths of a second instead of most of one (tests/test_cli.py checks it).
DEMOS = Path(__file__).resolve().parent / "demos"


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line."""

    def error(self, message: str) -> NoReturn:
        command = " ".join(["introspect", *self.prog.split()[1:], "--help"])
        self.exit(2, f"introspect: {message} (see {command})\n")


async def cmd_run(args: argparse.Namespace) -> int:
    method = method_named(args.method)
    if (args.fork or args.force) and not args.thread:
        raise UsageError("--fork and --force name an existing thread: add --thread ID")
    if not args.task and not args.fork:
        raise UsageError("run needs --task ID")
    context = context_from(args, method)
    await start_local_models(context)
    if args.task:
        env = make_env(context.env, **context.env_settings())
        try:
            env.check_task(args.task)
        finally:
            await env.close()
    thread_id = args.thread or f"{method.name}-{uuid.uuid4().hex[:10]}"
    graph_input: dict[str, Any] | None = {"task_id": args.task}
    async with open_checkpointer(args.checkpoint) as saver:
        if args.thread and await thread_exists(saver, args.thread):
            if args.fork:
                context, thread_id = await _fork(args, method, saver)
                graph_input = None
            elif args.force:
                await saver.adelete_thread(args.thread)
            else:
                state = "finished" if (await outcome_of(method, args.thread, saver)).finished else "unfinished"
                raise UsageError(
                    f"thread {args.thread!r} already exists ({state}): continue it with "
                    f"`{resume_command(args.thread, args.checkpoint)}`, or add --fork (continue a copy on a new "
                    "thread) or --force (start it over)"
                )
        elif args.fork:
            raise ThreadError(f"no checkpointed thread {args.thread!r} to fork")
        task = args.task or "(from the forked thread)"
        print(
            f"thread: {thread_id}  method: {method.name}  env: {context.env}  task: {task}  model: {context.model}",
            flush=True,
        )
        with resumable(thread_id, args.checkpoint):
            outcome = await drive(method, context, thread_id, saver, graph_input, update_printer(method), answer_all)
    print_outcome(outcome.state, thread_id, outcome.finished, resume_command(thread_id, args.checkpoint))
    return 0


async def _fork(args: argparse.Namespace, method: Method, saver: Any) -> tuple[Context, str]:
    """``run --thread ID --fork``: copy thread ID to a new thread that continues from ID's
    last checkpoint with ID's Context and this command's options over it; ID stays as it was."""
    source_method, base = await thread_context(saver, args.thread)
    if source_method is not method:
        raise UsageError(f"thread {args.thread!r} ran {source_method.name}, not {method.name}")
    where = await outcome_of(method, args.thread, saver)
    if where.finished:
        raise UsageError(
            f"thread {args.thread!r} has finished: there is nothing to continue; run the task "
            "again without --thread, or start it over with --force"
        )
    if args.task and args.task != str(where.state.get("task_id")):
        raise UsageError(f"thread {args.thread!r} runs task {where.state.get('task_id')!r}, not {args.task!r}")
    context = context_from(args, method, base)
    target = f"{args.thread}-fork-{uuid.uuid4().hex[:6]}"
    await fork(saver, args.thread, target)
    print(f"forked thread {args.thread} at its last checkpoint into {target}", flush=True)
    return context, target


async def cmd_resume(args: argparse.Namespace) -> int:
    from introspect.training import train

    async with open_checkpointer(args.checkpoint, existing=True) as saver:
        meta = await thread_metadata(saver, args.thread_id)
        with resumable(args.thread_id, args.checkpoint):
            if meta.get("introspect_training"):  # a training thread continues its training loop
                method = thread_method(meta, "introspect_training")
                context = method.context.from_dict(json.loads(meta["introspect_context"]))
                plan_out = Path(meta["introspect_plan_out"])
                record = await train(
                    method,
                    context,
                    task_ids=[],
                    plan_out=plan_out,
                    checkpointer=saver,
                    thread_id=args.thread_id,
                    resume=True,
                    on_update=training_printer(method),
                    on_question=answer_all,
                )
                print_training(record, plan_out)
                return 0
            printer = update_printer(thread_method(meta, "introspect_method"))
            outcome = await resume(saver, args.thread_id, printer, answer_all)
    print_outcome(outcome.state, args.thread_id, outcome.finished, resume_command(args.thread_id, args.checkpoint))
    return 0


async def cmd_eval(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from introspect.evaluate import eval_thread_id, evaluate, reused
    from introspect.pacing import DEFAULT_CEILING, Pacer
    from introspect.runlock import run_lock
    from nodes.runtime.served import check_served  # the model stack loads only when a command runs

    method = method_named(args.method)
    context = context_from(args, method, model_named="--model")
    if context.confirm:
        raise UsageError("eval does not stop to ask a person: confirm is for run, resume and train")
    tasks = task_list(context, args.split, args.tasks)
    results = results_path(args.results, method, context)
    await check_served(called_models(context))  # every model the run will call, before anything runs
    if args.max_concurrency and args.concurrency != "auto":
        raise UsageError("--max-concurrency is the ceiling of --concurrency auto: add --concurrency auto")
    pacer = Pacer(args.max_concurrency or DEFAULT_CEILING) if args.concurrency == "auto" else None
    concurrency = pacer or args.concurrency
    if args.workers > 1 and (args.checkpoint or default_url()) == "memory":
        raise UsageError("--workers share one checkpoint database: in-memory checkpoints are per process")
    if args.server:
        from introspect.remote import ServerEvaluation

        if args.checkpoint or args.workers > 1:
            raise UsageError(
                "--server runs the tasks and keeps their checkpoints on the server: drop --checkpoint and --workers"
            )
        if pacer:
            raise UsageError("--concurrency auto paces by the model's answers, which --server does not show here")
        server = ServerEvaluation(args.server, method, context, on_step=lambda task_id, node: on_step())
        await server.check()  # reachable, serving the graph: before the bar or any row
    # one process per run: refused here, before a row, a bar or a checkpoint (introspect.runlock)
    database = "" if args.server else args.checkpoint or default_url()
    if not args.server and args.workers <= 1:
        await start_local_models(context)  # workers and a server start their own; nothing written yet
    # the bar is closed on the way out, so a line printed after it (an error) starts on its own
    async with contextlib.AsyncExitStack() as shown:
        # opened first: a checkpoint home that cannot be written is the command's one line, nothing made
        saver = None if args.server else await shown.enter_async_context(open_checkpointer(args.checkpoint))
        await shown.enter_async_context(run_lock(results, database, eval_thread_id(method, context, "*")))
        reuse = await reused(method, context, results, tasks, args.keep_stale)
        for line in reuse.notes(f"{method.name} on {context.env} with {context.model}"):
            print(line, file=sys.stderr)
        print(to_run_line(len(tasks), len(reuse.finished)), file=sys.stderr)
        bar = shown.enter_context(
            tqdm(total=len(tasks), desc=f"{method.name} on {context.env}", unit="task", file=sys.stderr)
        )
        bar.update(len(reuse.finished))
        counts = {"errors": 0, "retries": 0}

        def on_row(row: dict[str, Any]) -> None:
            counts["errors"] += bool(row.get("error"))
            bar.update(1)
            bar.set_postfix(
                success=row["success"],
                reward=f"{row['reward']:.2f}",
                errors=counts["errors"],
                retries=counts["retries"],
            )

        def on_step() -> None:  # a graph step of a task on the server (the local path shows rows only)
            counts["steps"] = counts.get("steps", 0) + 1
            bar.set_postfix(steps=counts["steps"], errors=counts["errors"], refresh=False)

        def on_retry(task_id: str, notice: str) -> None:
            counts["retries"] += 1
            bar.write(f"  task {task_id}: {notice}", file=sys.stderr)

        if args.server:
            summary = await evaluate(
                method,
                context,
                tasks,
                results,
                None,
                concurrency,
                on_row,
                run=server.run_one,
                reuse=reuse,
                forget=server.forget,
            )
        elif args.workers > 1:
            from introspect.workers import WorkerPool

            slots = pacer.ceiling if pacer else args.concurrency  # per worker; the pacer admits fewer
            # the saver (checked and created once, before the workers) deletes a stale task's thread
            async with WorkerPool(
                args.workers, slots, method, context, args.checkpoint or default_url(), on_retry, pacer
            ) as pool:
                summary = await evaluate(
                    method,
                    context,
                    tasks,
                    results,
                    saver,
                    pacer or args.workers * slots,
                    on_row,
                    run=pool.run_one,
                    reuse=reuse,
                )
        else:
            with stopping_on_signals() as stop:
                summary = await evaluate(
                    method, context, tasks, results, saver, concurrency, on_row, on_retry, reuse=reuse, stop=stop
                )
            if stop.requested:
                bar.close()
                return stopped(stop, summary.tasks, len(tasks), in_memory(args.checkpoint))
        bar.close()
        print(f"results: {results}")
        print("\n".join(summary.lines()))
        if pacer:
            print(pacer.line())
        if summary.errors:
            kept = bool(args.server) or not in_memory(args.checkpoint)
            print(errored_line(len(summary.errors), summary.tasks, kept), file=sys.stderr)
            return 1
        return 0


def to_run_line(asked: int, finished: int) -> str:
    """How many tasks will run, said before the first starts."""
    have = f" ({finished} already have their rows)" if finished else ""
    return f"{asked - finished} of {asked} tasks to run{have}"


def stopped(stop: Stop, written: int, asked: int, memory: bool) -> int:
    """The line a gracefully stopped evaluation ends with, and its exit status."""
    then = (
        "in-memory checkpoints are gone: the same command runs the rest again"
        if memory
        else "run the same command again to continue them from their checkpoints"
    )
    print(stop.line(f"{written} of {asked} tasks have their rows; ", then), file=sys.stderr)
    return stop.exit_status()


async def cmd_train(args: argparse.Namespace) -> int:
    from introspect.training import train

    method = method_named(args.method)
    if method.training is None:
        raise UsageError(f"{method.name} has no training phase")
    from nodes.runtime.served import check_served  # the model stack loads only when a command runs

    context = context_from(args, method, model_named="--model")
    assert isinstance(context, TrainingContext)  # a method with a training phase declares such settings
    method.check(context, True)
    tasks = method.training.pool(make_env(context.env, **context.env_settings()), args.split, args.task_type)
    await check_served({**called_models(context), **context.training_models()})  # before anything runs
    await start_local_models(context)
    plan_out = Path(args.plan_out)
    thread_id = args.thread or f"train-{method.name}-{uuid.uuid4().hex[:10]}"
    async with open_checkpointer(args.checkpoint) as saver:
        if args.thread and await thread_exists(saver, args.thread):
            raise UsageError(
                f"thread {args.thread!r} already exists: continue it with "
                f"`{resume_command(args.thread, args.checkpoint)}`"
            )
        print(
            f"thread: {thread_id}  training {method.name} on {len(tasks)} {context.env} tasks: batch "
            f"{min(context.batch_size, len(tasks))}, {context.iterations} iterations",
            flush=True,
        )
        if len(tasks) < context.batch_size:
            print(
                f"note: the training pool has only {len(tasks)} tasks, fewer than --batch {context.batch_size}: "
                f"every batch is the whole pool",
                flush=True,
            )
        with resumable(thread_id, args.checkpoint):
            record = await train(
                method,
                context,
                task_ids=tasks,
                plan_out=plan_out,
                checkpointer=saver,
                thread_id=thread_id,
                on_update=training_printer(method),
                on_question=answer_all,
            )
    print_training(record, plan_out)
    return 0


def cmd_graphs(args: argparse.Namespace) -> int:
    """Every graph Studio serves (langgraph.json), with its nodes, envs and defaults; or, with
    ``--matrix``, every method x env cell that runs."""
    if args.matrix:
        print(matrix_text())
        return 0
    for name, (method, attribute) in studio_graphs().items():
        drawing = compiled(method, attribute).get_graph()
        nodes = [n for n in drawing.nodes if not n.startswith("__")]
        own = ", ".join(f"{f.name}={json.dumps(method.context.default(f.name))}" for f in method.context.own_fields())
        print(f"{name}  envs: {', '.join(method.graph_envs(name))}  nodes: {', '.join(nodes)}  settings: {own}")
        if args.mermaid:
            print(drawing.draw_mermaid())
    return 0


async def cmd_demo(args: argparse.Namespace) -> int:
    """Replay a shipped recording offline and show the agent moving through its graph."""
    available = sorted(p.stem for p in DEMOS.glob("*.json"))
    name = args.name or "laser"
    if name not in available:
        raise UsageError(f"no demo {name!r}; available: {', '.join(available)}")
    spec = json.loads((DEMOS / f"{name}.json").read_text())
    settings = method_named(spec["method"]).context
    context = settings(model=f"replay:{DEMOS / spec['recording']}", env=spec["env"], **spec.get("context", {}))
    thread_id = f"demo-{name}-{uuid.uuid4().hex[:8]}"
    print(
        f"demo: {spec['title']}\n(the model's replies are replayed from the recording {spec['recording']}; "
        "no key or network needed)\n",
        flush=True,
    )
    method = method_named(spec["method"])
    checkpoint = args.checkpoint or default_url()  # kept where `introspect view THREAD` finds it
    async with open_checkpointer(checkpoint) as saver:
        with resumable(thread_id, checkpoint):
            outcome = await drive(
                method, context, thread_id, saver, {"task_id": spec["task_id"]}, update_printer(method)
            )
    print_outcome(outcome.state, thread_id, outcome.finished)
    if checkpoint != "memory":
        print(f"see it step by step: introspect view {thread_id}")
    return 0


async def cmd_webarena_login(args: argparse.Namespace) -> int:
    """Sign into the WebArena sites (or the local shop) and store the logins the env starts with."""
    from envs.browser import close_browser
    from envs.webarena import login as webarena_login

    folder = Path(args.auth_dir) if args.auth_dir else webarena_login.auth_dir()
    webarena_login.plan(args.site or [], os.environ)  # unknown site, unset URL, missing account: exit 2
    try:
        written = await webarena_login.login(args.site or [], folder)  # LoginFailed: one line, exit 1
    finally:
        await close_browser()
    for path in written:
        print(f"signed in: {path}")
    if folder.resolve() != webarena_login.auth_dir().resolve():
        print(f"the webarena env reads logins from {webarena_login.auth_dir()}: set WEBARENA_AUTH_DIR={folder}")
    return 0


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--env", help="environment (default: the method's own)")
    parser.add_argument(
        "--model",
        help="provider:model, local (the embedded 135M model), gguf:FILE or scripted:FILE (default: "
        "openai:gpt-4o-mini with OPENAI_API_KEY or OPENAI_BASE_URL set, else local; eval and study name one)",
    )
    parser.add_argument("--temperature", type=float)
    parser.add_argument("--max-tokens", type=int)
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="a setting of the method (introspect run METHOD --help lists them), e.g. --set timeout=60",
    )
    parser.add_argument("--env-option", action="append", metavar="KEY=VALUE", help="an option of the environment")
    parser.add_argument("--plan", help="plan file (AutoPlan)")
    parser.add_argument(
        "--confirm",
        action="store_true",
        default=None,
        help="ask before an irreversible step (a purchase, a form submit, the answer, a plan update)",
    )
    _checkpoint(parser)
    _record(parser)


def _record(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--record",
        metavar="FILE",
        help="append every model exchange to FILE (JSONL); --model replay:FILE reproduces the run from it",
    )
    parser.add_argument(
        "--screenshots",
        action="store_true",
        help="keep a screenshot after every step of a "
        "browser env, beside the checkpoint database (for introspect view)",
    )


def _checkpoint(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--checkpoint",
        help="memory | sqlite (default, in introspect's home: --home) | "
        "sqlite:///ABSOLUTE/PATH | sqlite:RELATIVE/PATH | postgresql://...",
    )


def build_parser(method: Method | None = None) -> Parser:
    """The command line; with ``method`` (named in ``run``/``eval``/``train METHOD --help``),
    those commands' help ends with that method's settings."""
    parser = Parser(prog="introspect", description="Introspective LLM agents as LangGraph graphs.")
    parser.add_argument(
        "--home",
        metavar="DIR",
        help=f"where introspect keeps checkpoints, studies and data (default ${HOME}, else "
        "$XDG_DATA_HOME/introspect or ~/.local/share/introspect)",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    listed: dict[str, Any] = {}
    if method is not None:
        listed = {"epilog": settings_help(method), "formatter_class": argparse.RawDescriptionHelpFormatter}

    run = sub.add_parser("run", help="run one task, streaming each step", **listed)
    run.add_argument("method", help=f"one of: {method_names()}")
    run.add_argument("--task", help="the task id (required unless --fork)")
    run.add_argument(
        "--thread", help="thread id (default: a new one); an existing id is refused unless --fork or --force"
    )
    how = run.add_mutually_exclusive_group()
    how.add_argument(
        "--fork",
        action="store_true",
        help="continue a copy of the unfinished thread --thread on a new thread, from its last "
        "checkpoint, with its settings and this command's options over them",
    )
    how.add_argument("--force", action="store_true", help="delete thread --thread and start the task over on it")
    _common(run)
    run.set_defaults(handler=cmd_run)

    res = sub.add_parser("resume", help="continue an interrupted run from its checkpoint")
    res.add_argument("thread_id")
    _checkpoint(res)
    _record(res)
    res.set_defaults(handler=cmd_resume)

    ev = sub.add_parser("eval", help="evaluate a method on many tasks", **listed)
    ev.add_argument("method", help=f"one of: {method_names()}")
    ev.add_argument("--tasks", help="slice START:STOP of the split's task list, or ids a,b,c")
    ev.add_argument("--split", help="the env's split or suite (e.g. paper-43)")
    ev.add_argument(
        "--concurrency",
        type=concurrency_option,
        default=4,
        help="tasks in flight (default 4), or auto: as many as the model's provider answers without 429s "
        "or timeouts (rises while requests succeed, halves on a refusal)",
    )
    ev.add_argument("--max-concurrency", type=positive, help="the ceiling of --concurrency auto (default 32)")
    ev.add_argument(
        "--keep-stale",
        action="store_true",
        help="reuse finished rows written by other prompts or code (by default they run again)",
    )
    ev.add_argument("--results", help="results JSONL (default results/METHOD-ENV-MODEL.jsonl)")
    ev.add_argument("--server", metavar="URL", help="run each task on this LangGraph server (langgraph-sdk)")
    ev.add_argument(
        "--workers",
        type=positive,
        default=1,
        help="worker processes sharing the checkpoint database (--concurrency tasks each)",
    )
    _common(ev)
    ev.set_defaults(handler=cmd_eval)

    tr = sub.add_parser("train", help="learn a plan (AutoPlan)", **listed)
    tr.add_argument("method", help=f"one of: {method_names()}")
    tr.add_argument("--task-type", help="only tasks of this type (ALFWorld)")
    tr.add_argument("--split")
    tr.add_argument("--batch", type=int, help="tasks per batch (default 4)")
    tr.add_argument("--iterations", type=int, help="training iterations (default 3)")
    tr.add_argument("--plan-out", default="plans/plan.json")
    tr.add_argument("--thread")
    _common(tr)
    tr.set_defaults(handler=cmd_train)

    gr = sub.add_parser(
        "graphs", help="list the graphs; --mermaid prints their diagrams, --matrix the method x env matrix"
    )
    gr.add_argument("--mermaid", action="store_true")
    gr.add_argument(
        "--matrix", action="store_true", help="every method x env cell that runs; 'paper' marks the paper's own setting"
    )
    gr.set_defaults(handler=cmd_graphs)

    wa = sub.add_parser("webarena", help="WebArena utilities (login)")
    wa_sub = wa.add_subparsers(dest="action", required=True, parser_class=Parser)
    login = wa_sub.add_parser("login", help="sign into the WebArena sites and store the logins tasks start with")
    login.add_argument(
        "--site",
        action="append",
        metavar="SITE",
        help="shopping, shopping_admin, reddit, gitlab or shop; repeat for one combined login "
        "(default: every configured site and the pairs WebArena uses)",
    )
    login.add_argument("--auth-dir", help="where to write <sites>_state.json (default $WEBARENA_AUTH_DIR or .auth)")
    login.set_defaults(handler=cmd_webarena_login)

    st = sub.add_parser("study", help="run a study file: methods, settings and models compared, repeated, budgeted")
    st_sub = st.add_subparsers(dest="action", required=True, parser_class=Parser)
    st_run = st_sub.add_parser("run", help="run (or continue) the study SPEC.toml into its folder")
    st_run.add_argument("spec", metavar="SPEC.toml")
    st_run.add_argument(
        "--dry-run",
        action="store_true",
        help="print each run's tasks and the bound and expectation of its calls, tokens, cost and time; "
        "run nothing (needs no key)",
    )
    st_run.add_argument("--out", metavar="DIR", help="the study's folder (default studies/NAME in introspect's home)")
    st_run.add_argument(
        "--earlier",
        action="append",
        metavar="RESULTS.jsonl",
        help="earlier results whose rows of the same configuration give the estimate's expectation (repeatable)",
    )
    st_run.set_defaults(handler=_lazy("study.command", "cmd_run"))
    st_status = st_sub.add_parser("status", help="progress per run and repeat of the study in DIR")
    st_status.add_argument("folder", metavar="DIR")
    st_status.set_defaults(handler=_lazy("study.command", "cmd_status"))
    st_report = st_sub.add_parser("report", help="write the report and viewer pages of the study in DIR again")
    st_report.add_argument("folder", metavar="DIR")
    st_report.set_defaults(handler=_lazy("study.command", "cmd_report"))

    # `introspect report` (introspect/report/)
    from introspect.report import add_parser as add_report

    add_report(sub)

    # `introspect data` (introspect/data.py)
    from introspect.data import add_parser as add_data

    add_data(sub)

    # `introspect serve` (introspect/serve.py)
    from introspect.serve import add_parser as add_serve

    add_serve(sub)

    hist = sub.add_parser("history", help="list a run's checkpoints: id, step, node, action, reward")
    hist.add_argument("thread_id")
    _checkpoint(hist)
    hist.set_defaults(handler=_lazy("timetravel", "cmd_history"))

    fk = sub.add_parser("fork", help="continue a run from one of its checkpoints on a new thread")
    fk.add_argument("thread_id")
    fk.add_argument(
        "--at",
        required=True,
        metavar="CHECKPOINT_ID",
        help="the step to continue from: a checkpoint id (or its unique prefix) that introspect history lists; "
        "--checkpoint names the database the thread is in",
    )
    fk.add_argument("--thread", help="the new thread's id (default THREAD_ID-fork-XXXXXX)")
    _common(fk)
    fk.set_defaults(handler=_lazy("timetravel", "cmd_fork"))

    view = sub.add_parser(
        "view", help="a run's trajectory and model calls (or a results file's runs) as self-contained HTML"
    )
    view.add_argument("target", metavar="THREAD_ID|RESULTS.jsonl|STUDY", nargs="?")
    view.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help="two runs of one task side by side, step by step: thread ids, or results files with --task "
        "(a study's checkpoints are found without --checkpoint)",
    )
    view.add_argument("--task", help="with --compare and results files: the task whose rows to compare")
    view.add_argument(
        "--recording",
        metavar="FILE",
        help="a recording of the run (--record) to read model calls from where its checkpoints lack them",
    )
    view.add_argument("--out", default="views", help="folder for the pages (default views)")
    view.add_argument("--serve", action="store_true", help="then serve them on localhost")
    view.add_argument("--port", type=int, default=8000)
    _checkpoint(view)
    view.set_defaults(handler=_lazy("view", "cmd_view"))

    export = sub.add_parser("export", help="a results file's or a study's trajectories as JSONL for training")
    export.add_argument("source", metavar="RESULTS.jsonl|STUDY")
    export.add_argument(
        "--format",
        required=True,
        choices=("chat", "steps"),
        help="chat: one line per model call, in OpenAI's fine-tuning format; steps: one line per env step "
        "with its observation, action, reward and the method's introspection",
    )
    export.add_argument(
        "--per",
        choices=("call", "run"),
        default="call",
        help="chat lines: one per model call (earlier turns weight 0), or one per conversation of a run (a chat "
        "that goes on is one line, each reply trained once)",
    )
    export.add_argument("--out", metavar="FILE", help="the JSONL to write (default NAME.FORMAT.jsonl here)")
    export.add_argument("--success-only", action="store_true", help="only the runs that succeeded")
    export.add_argument("--method", help="only this method's runs")
    export.add_argument("--env", help="only the runs on this env")
    _checkpoint(export)
    export.set_defaults(handler=_lazy("export", "cmd_export"))

    demo = sub.add_parser("demo", help="an offline scripted run")
    demo.add_argument("name", nargs="?", help="which demo (default: laser)")
    _checkpoint(demo)
    _record(demo)
    demo.set_defaults(handler=cmd_demo)
    return parser


def _lazy(module: str, name: str) -> Any:
    """A handler in introspect.MODULE, imported when its command runs (a light --help)."""

    def handler(args: argparse.Namespace) -> Any:
        return getattr(importlib.import_module(f"introspect.{module}"), name)(args)

    return handler


def _helped_method(argv: list[str]) -> Method | None:
    """The method of ``introspect run|eval|train METHOD ... --help``, if one is named."""
    argv = argv[2:] if argv[:1] == ["--home"] else argv[1:] if argv[:1] and argv[0].startswith("--home=") else argv
    if len(argv) < 3 or argv[0] not in ("run", "eval", "train") or not {"-h", "--help"} & set(argv):
        return None
    try:
        return method_named(argv[1])
    except UnknownMethodError:
        return None


def method_names() -> str:
    """The registered methods, for the help; a malformed ``introspect.methods`` entry point is
    left for the command that looks a method up to report in its one line."""
    try:
        return ", ".join(registry())
    except UnknownMethodError:
        return "a registered method"


def main(argv: list[str] | None = None) -> int:
    args = build_parser(_helped_method(sys.argv[1:] if argv is None else argv)).parse_args(argv)
    if args.home:
        os.environ[HOME] = args.home  # for this command and the workers it starts
    try:
        with keeping(args):
            outcome = args.handler(args)
            return asyncio.run(outcome) if asyncio.iscoroutine(outcome) else int(outcome)
    except IntrospectError as exc:
        if exc.exit_status is None:  # a bug: its traceback says where
            raise
        print(f"introspect: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print("introspect: interrupted; the run is checkpointed and can be resumed", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`introspect graphs | head`): no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python flushes stdout at exit
        return 141


if __name__ == "__main__":
    sys.exit(main())
