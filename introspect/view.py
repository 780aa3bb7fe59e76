"""``introspect view``: a run's trajectory as one self-contained HTML page, or two runs of the
same task side by side (``--compare A B``).

The page is built from the thread's checkpoints, read as cards (introspect.trajectory). Every
environment step is a card: the node that acted, the model's rationale, the action, the
reward, the observation, the screenshot kept during the run (``--screenshots``,
nodes.runtime.screenshots; embedded, so the page needs no network and no other file), the method's
own structures as they stood after that step, and the model calls that led to it, collapsed:
each call's messages, reply (text and tool calls), tokens, seconds and retries. What happened
between steps is shown as marks (Devil's Advocate's backtracks and plan revisions, Structured
Reflection's ended trials with their reflections). Both are the method's to say
(``Method.view``), so this module names no method. A results file gives one page per row's
thread and an index page linking them. A training thread (``introspect train``) gets a page
as its method draws it instead (``Training.page``).

A comparison puts two run threads of the same task (env and task id) in two columns, one row
per step index, so two methods, settings or models line up step by step.
"""

from __future__ import annotations

import asyncio
import base64
import html
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from introspect.ablation.lineage import Fork, Lineage, forks_of, lineage_in
from introspect.runner import bound, thread_metadata, thread_method
from introspect.trajectory import Card, Trajectory, read_trajectory
from nodes.markup import STYLE, structure_html
from nodes.runtime.calls import ModelCall, tokens
from nodes.runtime.screenshots import screenshot_path


def _text(value: Any) -> str:
    return html.escape(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1))


def _tool_calls(calls: Iterable[Mapping[str, Any]]) -> str:
    return "".join(
        f"<pre class='tool-call'>{html.escape(str(c.get('name')))}"
        f"({html.escape(json.dumps(c.get('args') or {}, ensure_ascii=False))})</pre>"
        for c in calls
    )


def _call_html(call: ModelCall) -> str:
    """One call, collapsed: its summary line, then the messages sent and the reply."""
    request = call.get("request") or {}
    tokens_in, tokens_out = tokens(call)
    offered = ", ".join(str((t.get("function") or {}).get("name", "")) for t in request.get("tools") or [])
    messages = "".join(
        f"<div class='message {html.escape(str(m.get('role')))}'><b>{html.escape(str(m.get('role')))}</b>"
        f"<pre>{_text(m.get('content', ''))}</pre>{_tool_calls(m.get('tool_calls') or [])}</div>"
        for m in request.get("messages") or []
    )
    reply = (
        f"<div class='message reply'><b>reply</b><pre>{_text(call.get('content', ''))}</pre>"
        f"{_tool_calls(call.get('tool_calls') or [])}</div>"
    )
    summary = (
        f"call {int(call.get('position', 0)) + 1} · {html.escape(str(call.get('node') or ''))} · "
        f"{html.escape(str(call.get('model', '')))} · <span class='tokens'>{tokens_in}+{tokens_out} tokens</span> · "
        f"{float(call.get('seconds', 0.0)):.2f} s · {int(call.get('retries', 0))} retries"
    )
    return (
        f"<details class='call'><summary>{summary}</summary>"
        + (f"<p>tools offered: {html.escape(offered)}</p>" if offered else "")
        + f"{messages}{reply}</details>"
    )


def calls_html(card: Card) -> str:
    """The model calls of a card, collapsed; what is known of unrecorded ones (their count)."""
    if not card.made:
        return ""
    tokens_in = sum(tokens(c)[0] for c in card.calls)
    tokens_out = sum(tokens(c)[1] for c in card.calls)
    retries = sum(int(c.get("retries", 0)) for c in card.calls)
    seconds = sum(float(c.get("seconds", 0.0)) for c in card.calls)
    known = f" · {tokens_in}+{tokens_out} tokens · {seconds:.2f} s · {retries} retries" if card.calls else ""
    missing = card.made - len(card.calls)
    note = (
        f"<p class='unrecorded'>{missing} of these calls were not recorded: the thread's checkpoints "
        "predate the call log and no recording of it was found (introspect view --recording FILE)</p>"
        if missing
        else ""
    )
    return (
        f"<details class='calls'><summary>model calls: {card.made}{known}</summary>"
        f"{''.join(_call_html(c) for c in card.calls)}{note}</details>"
    )


def _step_html(card: Card, shots: Path, session: str) -> str:
    step = card.step
    refused = (
        ""
        if step.get("valid", True)
        else f" <span class='refused'>refused: {html.escape(step.get('feedback', ''))}</span>"
    )
    shot = screenshot_path(shots, session, card.index)
    picture = (
        f"<img class='shot' alt='screenshot after step {card.index + 1}' src='data:image/png;base64,"
        f"{base64.b64encode(shot.read_bytes()).decode()}'>"
        if shot.is_file()
        else ""
    )
    structures = "".join(
        f"<details open><summary>{html.escape(title)}</summary>{structure_html(value)}</details>"
        for title, value in card.structures
    )
    return (
        f"<section class='step' id='step-{card.index + 1}'><h2>Step {card.index + 1} "
        f"<small>({html.escape(str(step.get('node', '')))})</small>"
        f"<span class='reward'>reward {float(step.get('reward', 0.0)):.2f}</span></h2>"
        f"<p>{html.escape(str(step.get('rationale', '')))}</p>"
        f"<p>action <span class='action'>{html.escape(str(step.get('action', '')))}</span>{refused}</p>"
        f"{calls_html(card)}"
        f"<div class='cols'><div>{picture}<details{'' if picture else ' open'}><summary>observation</summary>"
        f"<pre>{html.escape(str(step.get('observation', '')))}</pre></details></div>"
        f"<div>{structures}</div></div></section>"
    )


def _card_html(card: Card, shots: Path, session: str) -> str:
    if card.kind == "step":
        return _step_html(card, shots, session)
    if card.kind == "calls":
        return f"<section class='step after'><h2>After the last step</h2>{calls_html(card)}</section>"
    return f"<div class='mark {card.kind}'><pre>{html.escape(card.text)}</pre></div>"


def _title(run: Trajectory) -> str:
    return f"{run.method.name} on {run.context.env}, task {run.final.get('task_id', '')}"


def _outcome(final: dict[str, Any]) -> str:
    usage = final.get("usage") or {}
    return (
        f"success={bool(final.get('success'))} reward={float(final.get('reward', 0.0)):.3f} "
        f"steps={final.get('actions', 0)} model calls={usage.get('model_calls', 0)} "
        f"tokens={usage.get('input_tokens', 0)}+{usage.get('output_tokens', 0)}"
        + (f" ({final['stop_reason']})" if final.get("stop_reason") else "")
    )


def _document(title: str, header: str, body: str, style: str = "") -> str:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{STYLE}{style}</style></head><body><header>{header}</header><main>{body}</main></body></html>"
    )


def page(run: Trajectory, shots: Path, lineage: Lineage | None = None, forks: Iterable[Fork] = ()) -> str:
    """The thread's page: a header with the outcome (and, for an ablation's fork, the run it is
    a fork of), the ablation forks of the run when it has any, then its steps and marks in order."""
    body = _forks_html(list(forks)) + "".join(_card_html(c, shots, run.thread_id) for c in run.cards)
    header = (
        f"<h1>{html.escape(_title(run))}</h1>"
        f"<div>thread {html.escape(run.thread_id)} · model {html.escape(run.context.model)}</div>"
        f"<div>{html.escape(_outcome(run.final))}</div><div>{html.escape(str(run.final.get('goal', '')))}</div>"
        + (_lineage_html(lineage) if lineage is not None else "")
    )
    return _document(_title(run), header, body or "<p>No step was executed.</p>")


def _off(lineage: Lineage) -> str:
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in lineage.off.items())


def _lineage_html(lineage: Lineage) -> str:
    """A fork's mark: the run it is an ablation of (linked), without what, from where."""
    return (
        f"<div class='ablation-of'>Ablation of <a href='{page_name(lineage.of)}'>{html.escape(lineage.of)}</a>: "
        f"without {html.escape(lineage.intervention)} #{lineage.count} ({html.escape(_off(lineage))}), "
        f"forked before step {lineage.step} at checkpoint {html.escape(lineage.checkpoint)}</div>"
    )


def _forks_html(forks: list[Fork]) -> str:
    """The original's table of its ablation forks: which intervention was switched off, at which
    step, and the fork's outcome, each linked to the fork's page."""
    if not forks:
        return ""
    rows = "".join(
        f"<tr><td>{html.escape(f.lineage.intervention)} #{f.lineage.count}</td><td>{html.escape(_off(f.lineage))}</td>"
        f"<td>{f.lineage.step}</td><td>"
        + (f"success={f.success} reward={f.reward:.3f}" if f.finished else "unfinished")
        + f"</td><td><a class='fork' href='{page_name(f.lineage.fork)}'>{html.escape(f.lineage.fork)}</a></td></tr>"
        for f in forks
    )
    head = "<tr><th>without</th><th>switched off by</th><th>at step</th><th>outcome</th><th>fork</th></tr>"
    return (
        f"<section class='step ablations'><h2>Ablations: this run forked without an intervention</h2>"
        f"<table>{head}{rows}</table></section>"
    )


def _settings(run: Trajectory) -> str:
    from introspect.evaluate import changed_settings

    changed = changed_settings(run.context)
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in changed.items()) or "defaults"


def _groups(run: Trajectory) -> list[list[Card]]:
    """The cards cut before each step: group i holds step i with the marks before it."""
    groups: list[list[Card]] = [[]]
    for card in run.cards:
        groups[-1].append(card)
        if card.kind == "step":
            groups.append([])
    return groups if groups[-1] else groups[:-1]


_PORT = re.compile(r"\b(127\.0\.0\.1|localhost):\d+")  # a local site's port changes from run to run
DIFFERS = (
    ".pair.differs{outline:3px solid #c0392b;outline-offset:4px}"
    ".difference{font-weight:bold;color:#ffcdc4}.difference a{color:inherit}"
)


@dataclass
class Difference:
    """Where two runs of one task first part: the step (1-based) and what differs at it."""

    step: int
    what: str  # "the page", "the reply and the action", "run B has no step 4", ...


def _seen(text: Any) -> str:
    return _PORT.sub(r"\1", str(text or ""))


def _replies(card: Card) -> list[tuple[str, str]]:
    """What the model answered on the way to a step (content and tool calls), in order."""
    return [(str(c.get("content") or ""), json.dumps(c.get("tool_calls") or [], sort_keys=True)) for c in card.calls]


def first_difference(a: Trajectory, b: Trajectory) -> Difference | None:
    """The first step at which runs ``a`` and ``b`` differ, and what differs there, in the
    order a step happens: the page it was taken on, the model's reply, the action taken
    (then whether one run took more steps). None when they took the same steps."""
    for index in range(max(len(a.steps), len(b.steps))):
        if index >= len(a.steps) or index >= len(b.steps):
            ended = "A" if index >= len(a.steps) else "B"
            return Difference(index + 1, f"run {ended} has no step {index + 1}")
        left, right = a.steps[index], b.steps[index]
        parts = [
            name
            for name, x, y in (
                ("the page", _seen(left.observed), _seen(right.observed)),
                ("the reply", _replies(left), _replies(right)),
                ("the action", left.step.get("action"), right.step.get("action")),
            )
            if x != y
        ]
        if parts:
            return Difference(index + 1, " and ".join(parts))
    return None


def _difference_html(found: Difference | None) -> str:
    if found is None:
        return "<p class='difference'>The two runs took the same steps.</p>"
    return (
        f"<p class='difference'>First difference: <a href='#difference'>step {found.step}</a> "
        f"({html.escape(found.what)})</p>"
    )


def compare_page(a: Trajectory, b: Trajectory, shots: tuple[Path, Path]) -> str:
    """Two runs of one task side by side: one row per step index, run A left, run B right,
    the row where they first differ marked, and linked from the top."""
    heads = "".join(
        f"<div class='side'><h2>{name}: {html.escape(run.method.name)} · {html.escape(run.context.model)}</h2>"
        f"<div>thread {html.escape(run.thread_id)} · settings {html.escape(_settings(run))}</div>"
        f"<div>{html.escape(_outcome(run.final))}</div></div>"
        for name, run in (("A", a), ("B", b))
    )
    left, right = _groups(a), _groups(b)
    found = first_difference(a, b)
    marked = found.step - 1 if found else -1  # group i holds step i + 1
    rows = "".join(
        ("<div class='pair differs' id='difference'>" if i == marked else "<div class='pair'>")
        + "".join(
            "<div class='side'>"
            + ("".join(_card_html(c, seen, run.thread_id) for c in groups[i]) if i < len(groups) else "<p>-</p>")
            + "</div>"
            for run, groups, seen in ((a, left, shots[0]), (b, right, shots[1]))
        )
        + "</div>"
        for i in range(max(len(left), len(right)))
    )
    title = f"{a.context.env}, task {a.final.get('task_id', '')}: {a.method.name} vs {b.method.name}"
    header = (
        f"<h1>{html.escape(title)}</h1><div>{html.escape(str(a.final.get('goal', '')))}</div>"
        f"<div class='pair heads'>{heads}</div>{_difference_html(found)}"
    )
    return _document(title, header, rows or "<p>No step was executed.</p>", DIFFERS)


def index_page(source: str, rows: list[dict[str, Any]], pages: dict[str, str]) -> str:
    """A results file's index (or a study's): one row per task, linking its thread's page."""
    study = ("label", "repeat") if any(r.get("label") for r in rows) else ()
    cells = (*study, "task_id", "success", "reward", "steps", "stop_reason", "model_calls", "error")
    head = "".join(f"<th>{c}</th>" for c in cells)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td><a href='{html.escape(pages[r['thread_id']])}'>{html.escape(str(r.get(c)))}</a></td>"
            if c == "task_id" and r.get("thread_id") in pages
            else f"<td>{html.escape(str(r.get(c, '')))}</td>"
            for c in cells
        )
        + "</tr>"
        for r in rows
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(source)}</title>"
        f"<style>{STYLE}</style></head><body><header><h1>{html.escape(source)}</h1>"
        f"<div>{len(rows)} tasks</div></header><main><table><tr>{head}</tr>{body}</table></main></body></html>"
    )


async def thread_page(
    saver: Any, thread_id: str, shots: Path, recording: Path | None = None, forks: Iterable[Fork] = ()
) -> str:
    """The page of a run thread (marked as an ablation's fork when it is one; ``forks``: its own
    ablation forks), or of a training thread (as its method's ``Training.page`` draws it)."""
    meta = await thread_metadata(saver, thread_id)
    if meta.get("introspect_training"):
        method = thread_method(meta, "introspect_training")
        assert method.training is not None  # only a method with a training phase writes such a thread
        context = method.context.from_dict(json.loads(meta["introspect_context"]))
        return await method.training.page(bound(method.training.graph, saver), thread_id, context)
    return page(await read_trajectory(saver, thread_id, recording), shots, lineage_in(meta), forks)


def page_name(thread_id: str) -> str:
    """The file a thread's page is written to (the report's index links runs by it)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in thread_id) + ".html"


def compare_name(a: str, b: str) -> str:
    """The file the comparison of threads ``a`` and ``b`` is written to (the report links it)."""
    return "compare-" + page_name(f"{a}-vs-{b}")


def _checked(out: Path, recording: str | None) -> Path | None:
    """Refuse an --out that is a file and a --recording that is not one, before anything is written."""
    from introspect.options import UsageError

    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is not a directory")
    if recording is not None and not Path(recording).is_file():
        raise UsageError(f"no recording {recording}")
    return Path(recording) if recording is not None else None


def _rows(results: Path) -> list[dict[str, Any]] | None:
    """The rows of results file ``results``, or of every results file of study folder
    ``results``; None for a thread id."""
    from introspect.evaluate import read_rows
    from introspect.finding import results_in
    from introspect.options import UsageError

    if results.is_dir():
        return [row for file in results_in([results]) for row in read_rows(file)]
    if str(results).endswith(".jsonl") and not results.is_file():
        raise UsageError(f"no results file {results}")
    return read_rows(results) if results.is_file() else None


async def write_views(target: str, out: Path, checkpoint: str | None, recording: str | None = None) -> Path:
    """Write the page of thread ``target``, or of every thread of results file (or study
    folder) ``target`` and its index; returns the page to open. The checkpointer is
    ``checkpoint``, else the one that holds them (introspect.finding). ``recording``: where
    calls the checkpoints lack are read."""
    from introspect.checkpoint import default_url, open_checkpointer, redact, screenshot_folder
    from introspect.finding import checkpoint_of, thread_checkpoint
    from introspect.options import UsageError
    from introspect.runner import ThreadError

    results = Path(target)
    rows = _rows(results)
    recorded = _checked(out, recording)
    if rows is None:
        checkpoint = await thread_checkpoint(target, checkpoint)
    else:
        checkpoint = checkpoint_of(results, checkpoint)
    shots = screenshot_folder(checkpoint)
    pages: dict[str, str] = {}
    async with open_checkpointer(checkpoint, existing=True) as saver:
        for thread_id in [r["thread_id"] for r in rows if r.get("thread_id")] if rows is not None else [target]:
            try:
                forks = await forks_of(saver, thread_id)
                text = await thread_page(saver, thread_id, shots, recorded, forks)
            except ThreadError:
                if rows is None:
                    raise
                continue  # a row whose thread is not in this checkpointer: listed, not linked
            out.mkdir(parents=True, exist_ok=True)
            await asyncio.to_thread((out / page_name(thread_id)).write_text, text, encoding="utf-8")
            pages[thread_id] = page_name(thread_id)
            for fork in forks:  # beside it, so that its links open them
                fork_page = await thread_page(saver, fork.lineage.fork, shots)
                await asyncio.to_thread((out / page_name(fork.lineage.fork)).write_text, fork_page, encoding="utf-8")
    if rows is None:
        return out / pages[target]
    if not pages:
        raise UsageError(
            f"none of the {len(rows)} rows of {target} has its thread in {redact(checkpoint or default_url())}: "
            "name the checkpointer they ran with (--checkpoint)"
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / "index.html").write_text(index_page(str(results), rows, pages), encoding="utf-8")
    return out / "index.html"


def compared_thread(selector: str, task: str | None) -> str:
    """The thread a ``--compare`` side names: a thread id as given, or, for a results file, the
    thread of its latest row of ``task`` (of its only task when ``task`` is not given)."""
    from introspect.evaluate import read_rows
    from introspect.options import UsageError

    if not selector.endswith(".jsonl"):
        return selector
    path = Path(selector)
    if not path.is_file():
        raise UsageError(f"no results file {selector}")
    rows = [r for r in read_rows(path) if r.get("thread_id")]
    tasks = list(dict.fromkeys(str(r["task_id"]) for r in rows))
    if task is None and len(tasks) != 1:
        raise UsageError(f"{selector} holds {len(tasks)} tasks: name the one to compare with --task ID")
    wanted = task if task is not None else tasks[0]
    chosen = [r for r in rows if str(r["task_id"]) == wanted]
    if not chosen:
        raise UsageError(f"{selector} has no row of task {wanted!r}")
    return str(chosen[-1]["thread_id"])


async def _compared_run(selector: str, task: str | None, checkpoint: str | None) -> tuple[Trajectory, Path]:
    """The run a ``--compare`` side names, read from ``checkpoint`` or the checkpointer that
    holds it (introspect.finding), and the folder of its screenshots."""
    from introspect.checkpoint import open_checkpointer, screenshot_folder
    from introspect.finding import checkpoint_of, thread_checkpoint

    thread = compared_thread(selector, task)
    if selector.endswith(".jsonl"):
        checkpoint = checkpoint_of(Path(selector), checkpoint)
    else:
        checkpoint = await thread_checkpoint(thread, checkpoint)
    async with open_checkpointer(checkpoint, existing=True) as saver:
        return await read_trajectory(saver, thread), screenshot_folder(checkpoint)


async def write_compare(a: str, b: str, out: Path, checkpoint: str | None, task: str | None = None) -> Path:
    """Write the page comparing runs ``a`` and ``b`` (thread ids or results files, with
    ``task``) of one task; refuse runs of different tasks. Returns the page."""
    from introspect.options import UsageError

    _checked(out, None)
    (left, left_shots), (right, right_shots) = [await _compared_run(s, task, checkpoint) for s in (a, b)]
    threads = left.thread_id, right.thread_id
    ran = [(run.context.env, str(run.final.get("task_id", ""))) for run in (left, right)]
    if ran[0] != ran[1]:
        raise UsageError(
            f"--compare needs two runs of one task: {threads[0]} ran {ran[0][0]} task {ran[0][1]!r}, "
            f"{threads[1]} ran {ran[1][0]} task {ran[1][1]!r}"
        )
    text = compare_page(left, right, (left_shots, right_shots))
    target = out / compare_name(*threads)
    out.mkdir(parents=True, exist_ok=True)
    await asyncio.to_thread(target.write_text, text, encoding="utf-8")
    return target


def serve(folder: Path, port: int) -> None:
    """Serve ``folder`` on localhost until interrupted."""
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(folder))
    with ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"serving {folder} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


def cmd_view(args: Any) -> int:
    from introspect.options import UsageError

    if (args.target is None) == (args.compare is None):
        raise UsageError("view takes a THREAD_ID, RESULTS.jsonl or STUDY folder, or --compare A B (not both)")
    if args.compare is not None and args.recording:
        raise UsageError("--recording is for one run's page: --compare reads each run's own recording")
    if args.task and args.compare is None:
        raise UsageError("--task picks the row of a results file to --compare")
    if args.compare is not None:
        a, b = args.compare
        opened = asyncio.run(write_compare(a, b, Path(args.out), args.checkpoint, args.task))
    else:
        opened = asyncio.run(write_views(args.target, Path(args.out), args.checkpoint, args.recording))
    print(f"wrote {opened}")
    if args.serve:
        serve(opened.parent, args.port)
    return 0
