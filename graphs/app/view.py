"""``introspect view``: a run's trajectory as one self-contained HTML page.

The page is built from the thread's checkpoints (LangGraph's ``aget_state_history``), oldest
first. Every environment step is a card: the node that acted, the model's rationale, the
action, the reward, the observation, the screenshot kept during the run (``--screenshots``,
nodes.screenshots; embedded, so the page needs no network and no other file), and the
method's own structures as they stood after that step. What happened between steps is shown
as marks (Devil's Advocate's backtracks and plan revisions, Structured Reflection's ended
trials with their reflections). Both are the method's to say (``Method.view``), so this
module names no method. A results file gives one page per row's
thread and an index page linking them. A training thread (``introspect train``) gets a page
as its method draws it instead (``Training.page``).
"""

from __future__ import annotations

import asyncio
import base64
import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphs.app.runner import bound, graph_for, thread_context, thread_metadata, thread_method
from graphs.method import Method, grown
from nodes.markup import STYLE, structure_html
from nodes.screenshots import screenshot_path


@dataclass
class Card:
    """One environment step, or a mark between steps."""

    kind: str  # "step" or a mark's kind (the method's View.marks: "backtrack", "revision", "trial")
    text: str = ""
    step: dict[str, Any] = field(default_factory=dict)
    index: int = 0
    structures: list[tuple[str, Any]] = field(default_factory=list)


async def thread_cards(saver: Any, thread_id: str) -> tuple[Method, Any, dict[str, Any], list[Card]]:
    """The thread's method, Context, final state and cards, oldest first: each step with the
    method's structures after it, and the method's marks between checkpoints (``Method.view``)."""
    method, context = await thread_context(saver, thread_id)
    graph = graph_for(method, saver)
    snapshots = [s async for s in graph.aget_state_history({"configurable": {"thread_id": thread_id}})]
    snapshots.reverse()
    cards: list[Card] = []
    before: dict[str, Any] = {}
    states: list[dict[str, Any]] = []
    for snap in snapshots:
        values = dict(snap.values)
        states.append(values)
        cards += [Card(kind, text) for kind, text in method.view.marks(before, values)]
        done = len(before.get("trajectory") or [])
        for offset, step in enumerate(grown(before, values, "trajectory")):
            cards.append(Card("step", step=step, index=done + offset, structures=method.view.structures(states)))
        before = values
    return method, context, before, cards


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
        f"<div class='cols'><div>{picture}<details{'' if picture else ' open'}><summary>observation</summary>"
        f"<pre>{html.escape(str(step.get('observation', '')))}</pre></details></div>"
        f"<div>{structures}</div></div></section>"
    )


def page(thread_id: str, method: Method, context: Any, final: dict[str, Any], cards: list[Card], shots: Path) -> str:
    """The thread's page: a header with the outcome, then its steps and marks in order."""
    usage = final.get("usage") or {}
    outcome = (
        f"success={bool(final.get('success'))} reward={float(final.get('reward', 0.0)):.3f} "
        f"steps={final.get('actions', 0)} model calls={usage.get('model_calls', 0)} "
        f"tokens={usage.get('input_tokens', 0)}+{usage.get('output_tokens', 0)}"
        + (f" ({final['stop_reason']})" if final.get("stop_reason") else "")
    )
    body = "".join(
        _step_html(c, shots, thread_id)
        if c.kind == "step"
        else f"<div class='mark {c.kind}'><pre>{html.escape(c.text)}</pre></div>"
        for c in cards
    )
    title = f"{method.name} on {context.env}, task {final.get('task_id', '')}"
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style></head><body><header><h1>{html.escape(title)}</h1>"
        f"<div>thread {html.escape(thread_id)} · model {html.escape(context.model)}</div>"
        f"<div>{html.escape(outcome)}</div><div>{html.escape(str(final.get('goal', '')))}</div></header>"
        f"<main>{body or '<p>No step was executed.</p>'}</main></body></html>"
    )


def index_page(source: str, rows: list[dict[str, Any]], pages: dict[str, str]) -> str:
    """A results file's index: one row per task, linking its thread's page."""
    cells = ("task_id", "success", "reward", "steps", "stop_reason", "model_calls", "error")
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


async def thread_page(saver: Any, thread_id: str, shots: Path) -> str:
    """The page of a run thread, or of a training thread (as its method's ``Training.page`` draws it)."""
    meta = await thread_metadata(saver, thread_id)
    if meta.get("introspect_training"):
        method = thread_method(meta, "introspect_training")
        assert method.training is not None  # only a method with a training phase writes such a thread
        context = method.context.from_dict(json.loads(meta["introspect_context"]))
        return await method.training.page(bound(method.training.graph, saver), thread_id, context)
    method, context, final, cards = await thread_cards(saver, thread_id)
    return page(thread_id, method, context, final, cards, shots)


def _file_name(thread_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in thread_id) + ".html"


async def write_views(target: str, out: Path, checkpoint: str | None) -> Path:
    """Write the page of thread ``target``, or of every thread of results file ``target`` and
    its index; returns the page to open."""
    from graphs.app.checkpoint import open_checkpointer, screenshot_folder
    from graphs.app.evaluate import read_rows
    from graphs.app.options import UsageError
    from graphs.app.runner import ThreadError

    results = Path(target)
    if target.endswith(".jsonl") and not results.is_file():
        raise UsageError(f"no results file {target}")
    rows = read_rows(results) if results.is_file() else None
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is not a directory")
    shots = screenshot_folder(checkpoint)
    pages: dict[str, str] = {}
    async with open_checkpointer(checkpoint, existing=True) as saver:
        for thread_id in [r["thread_id"] for r in rows if r.get("thread_id")] if rows is not None else [target]:
            try:
                text = await thread_page(saver, thread_id, shots)
            except ThreadError:
                if rows is None:
                    raise
                continue  # a row whose thread is not in this checkpointer: listed, not linked
            out.mkdir(parents=True, exist_ok=True)
            await asyncio.to_thread((out / _file_name(thread_id)).write_text, text, encoding="utf-8")
            pages[thread_id] = _file_name(thread_id)
    if rows is None:
        return out / pages[target]
    out.mkdir(parents=True, exist_ok=True)
    (out / "index.html").write_text(index_page(str(results), rows, pages), encoding="utf-8")
    return out / "index.html"


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
    opened = asyncio.run(write_views(args.target, Path(args.out), args.checkpoint))
    print(f"wrote {opened}")
    if args.serve:
        serve(opened.parent, args.port)
    return 0
