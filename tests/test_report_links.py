"""A study's report index links each task to its run pages and to the page comparing the two
methods on it, and its tables sort and filter in the page through a script shipped beside it
(offline, from file://). The study runs here: LASER replaying its demo and Devil's Advocate
giving up, on WebShop, in two repeats."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from introspect.evaluate import read_rows
from introspect.view import compare_name, page_name
from tests.support.cli import ROOT, output, run_main
from tests.support.laser_demo import DEMO, write_demo_script
from tests.support.pages import opened

TASK = DEMO["task_id"]
ONLY_DA = "synthetic-1"  # a task only Devil's Advocate ran: nothing to compare


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("links")
    laser = write_demo_script(folder / "demo.jsonl")
    spec = folder / "study.toml"
    spec.write_text(
        f'name = "links"\nrepeats = 2\n'
        f'[[runs]]\nmethod = "laser"\nenv = "webshop"\ntasks = "{TASK}"\nmodel = "{laser}"\nlabel = "laser"\n'
        f'[[runs]]\nmethod = "devils_advocate"\nenv = "webshop"\ntasks = "{TASK},{ONLY_DA}"\n'
        f'model = "scripted:{ROOT / "studies" / "giveup.jsonl"}"\nlabel = "da"\n'
        "settings = {max_episodes = 1, max_actions = 2}\n",
        encoding="utf-8",
    )
    out = folder / "out"
    code = run_main(["study", "run", str(spec), "--out", str(out)], logs=folder, name="run")
    assert code == 0, output(folder, "run")
    rows = {(label, k): read_rows(out / "results" / f"{label}.r{k}.jsonl") for label in ("laser", "da") for k in (1, 2)}
    return {"out": out, "index": out / "report" / "index.html", "rows": rows}


def task_rows(index: Path) -> dict[str, list[list[str]]]:
    """The tasks table: each task's cells, as the hrefs each cell links (its text when none),
    under the header's column names."""
    text = index.read_text(encoding="utf-8")
    (table,) = re.findall(r"<table class='sortable tasks'>(.*?)</table>", text)
    out = {"": [[c] for c in re.findall(r"<th>(.*?)</th>", table)[1:]]}
    for body in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>", 1)[1]):
        cells = re.findall(r"<td>(.*?)</td>", body)
        out[cells[0]] = [re.findall(r"href='([^']+)'", c) or [re.sub("<[^>]+>", "", c)] for c in cells[1:]]
    return out


def test_the_table_script_is_shipped_beside_the_page_and_every_table_uses_it(study):
    text = study["index"].read_text(encoding="utf-8")
    script = study["index"].parent / "tables.js"
    assert "<script src='tables.js'></script>" in text
    assert script.read_text(encoding="utf-8") == (ROOT / "introspect" / "report" / "tables.js").read_text()
    tables = re.findall(r"<table[^>]*>", text)
    assert len(tables) > 3 and all("sortable" in t for t in tables)
    assert "http://" not in script.read_text() and "https://" not in script.read_text()


def test_each_task_links_its_run_pages_and_the_comparison_of_the_two_methods(study):
    index, rows, views = study["index"], study["rows"], study["out"] / "views"
    shown = task_rows(index)
    columns = [c for (c,) in shown.pop("")]
    assert set(shown) == {TASK, ONLY_DA}
    labels = [c.rsplit(" ", 1)[1] for c in columns[:2]]  # the configurations, the first is the baseline
    assert sorted(labels) == ["da", "laser"] and columns[2] == "#1 vs #2"
    cells = dict(zip(columns, shown[TASK]))
    thread = {(label, k): {r["task_id"]: r["thread_id"] for r in rows[(label, k)]} for label, k in rows}
    for column, label in zip(columns, labels):
        expected = [views / f"{label}.r{k}" / page_name(thread[(label, k)][TASK]) for k in (1, 2)]
        assert [(index.parent / href).resolve() for href in cells[column]] == [p.resolve() for p in expected]
        assert all(p.is_file() for p in expected)
    page = views / "compare" / compare_name(*(thread[(label, 1)][TASK] for label in labels))
    assert [(index.parent / href).resolve() for href in cells["#1 vs #2"]] == [page.resolve()]
    methods = ["devils_advocate" if label == "da" else "laser" for label in labels]
    assert f"webshop, task {TASK}: {methods[0]} vs {methods[1]}" in page.read_text(encoding="utf-8")
    only = dict(zip(columns, shown[ONLY_DA]))
    laser_column = columns[labels.index("laser")]
    assert only[laser_column] == ["-"] and only["#1 vs #2"] == ["-"]  # LASER did not run it: nothing to compare
    assert len(only[columns[labels.index("da")]]) == 2  # Devil's Advocate's two repeats, linked
    linked = re.findall(r"href='([^']+)'", index.read_text(encoding="utf-8"))
    assert all((index.parent / href).is_file() for href in linked), linked


SORT_AND_FILTER = """() => {
    const table = document.querySelector('table.sortable');
    const rows = () => [...table.tBodies[0].rows].filter(r => !r.hidden).map(r => r.cells[0].innerText);
    const header = table.tHead.rows[0].cells[0];
    const before = rows();
    header.click();
    const ascending = rows();
    header.click();
    const descending = rows();
    const box = table.previousElementSibling;
    box.value = 'devils_advocate';
    box.dispatchEvent(new Event('input'));
    return {before, ascending, descending, filtered: rows(), box: box.tagName, boxes: document.querySelectorAll(
        'input.filter').length, tables: document.querySelectorAll('table.sortable').length};
}"""


@pytest.mark.browser
def test_tables_sort_and_filter_in_the_page_offline(study, tmp_path):
    shown = asyncio.run(opened(study["index"], SORT_AND_FILTER))
    seen = shown["seen"]
    assert shown["asked"] == []
    assert seen["box"] == "INPUT" and seen["boxes"] == seen["tables"] > 3
    assert len(seen["before"]) == 2  # the comparison: one line per configuration
    assert seen["ascending"] == sorted(seen["before"]) and seen["descending"] == sorted(seen["before"])[::-1]
    assert seen["filtered"] == [b for b in seen["before"] if "devils_advocate" in b]
