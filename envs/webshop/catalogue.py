"""The WebShop catalogue: streamed from WebShop's data files once, then read from a disk cache.

A data folder holds WebShop's files (plain or ``.gz``): the products
(``items_shuffle_1000.json`` or the full ``items_shuffle.json``, 1.18M products), their
attributes and synthetic instructions (``items_ins_v2_1000.json`` / ``items_ins_v2.json``)
and, optionally, the human instructions (``items_human_ins.json``). The first load
streams them (``ijson``: one product in memory at a time, never the whole file) and writes
a cache folder, keyed by the files' paths, sizes and modification times:

* ``products.jsonl`` and ``offsets.npy``: every processed product, read back by position;
* ``index/``: the search index (``envs.webshop.search``), memory-mapped;
* ``prices.npy``: the price each product is charged;
* ``human_goals.json``: the human goals, shuffled;
* ``synthetic_*.npy``: what is needed to build any synthetic goal on demand (the products
  with an instruction, their budgets and weights, and the shuffled order), so that the
  millions of synthetic goals of the full catalogue are never all in memory.

Later loads (any process) only open the cache. The cache lives in ``$INTROSPECT_CACHE``
(default ``$XDG_CACHE_HOME/introspect`` or ``~/.cache/introspect``), under ``webshop/``.

Goals are built as WebShop builds them, with its random draws made reproducible. LASER's
``laser_agent.py`` calls ``random.seed(233)`` before WebShop loads, so its goals come from
one generator seeded with 233 that draws the products' prices (in catalogue order) and then
the goals' budgets; WebShop then shuffles the goals with seed 233. Both goal lists are built
that way here: the human goals (WebShop with ``human_goals=True``, what LASER and WebShop's
test/eval/train splits use) and the synthetic goals (``human_goals=False``), each continuing
the same generator after the same price draws.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import json
import math
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import threading
from array import array
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, overload

import ijson
import numpy as np

from envs.base import DATA_ROOT
from envs.datasets import installed
from envs.webshop.data import (
    Goal,
    Product,
    build_product,
    combinations,
    human_goal,
    price_upper,
    product_price,
    search_text,
    synthetic_goal,
    synthetic_weight,
)
from envs.webshop.search import IndexBuilder, SearchIndex

DATA_DIR = DATA_ROOT / "webshop"
GOAL_SEED = 233  # LASER seeds Python's generator with 233; WebShop shuffles goals with 233
FORMAT = 1  # bump when what the cache holds, or how it is computed, changes
PRODUCT_FILES = ("items_shuffle_1000.json", "items_shuffle.json")
ATTRIBUTE_FILES = ("items_ins_v2_1000.json", "items_ins_v2.json")
HUMAN_FILES = ("items_human_ins.json",)
META = "meta.json"

_build_lock = threading.Lock()


def cache_root() -> Path:
    """Where derived data is kept: $INTROSPECT_CACHE, else the user's cache folder."""
    if os.environ.get("INTROSPECT_CACHE"):
        return Path(os.environ["INTROSPECT_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(base).expanduser() / "introspect"


@overload
def _find(folder: Path, names: tuple[str, ...], required: Literal[True] = True) -> Path: ...
@overload
def _find(folder: Path, names: tuple[str, ...], required: Literal[False]) -> Path | None: ...
def _find(folder: Path, names: tuple[str, ...], required: bool = True) -> Path | None:
    for name in names:
        for path in (folder / f"{name}.gz", folder / name):
            if path.is_file():
                return path
    if required:
        raise FileNotFoundError(f"WebShop data file {' or '.join(names)} (plain or .gz) not found in {folder}")
    return None


def _open(path: Path) -> io.BufferedIOBase:
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def _stream(path: Path, prefix: str) -> Iterator[Any]:
    """The items of the JSON array at ``prefix`` of ``path``, one at a time."""
    with _open(path) as f:
        yield from ijson.items(f, prefix, use_float=True)


def _stream_pairs(path: Path) -> Iterator[tuple[str, Any]]:
    """The (key, value) pairs of the JSON object ``path`` holds, one at a time."""
    with _open(path) as f:
        yield from ijson.kvitems(f, "", use_float=True)


class _Attributes:
    """The attributes file streamed into a scratch SQLite table, so that each product's
    record is looked up without holding the full file's 1.18M records in memory."""

    def __init__(self, path: Path, source: Path) -> None:
        self._db = sqlite3.connect(path)
        self._db.execute("CREATE TABLE ins (asin TEXT PRIMARY KEY, record TEXT)")
        self._db.executemany(
            "INSERT OR REPLACE INTO ins VALUES (?, ?)",  # the last record wins, as in a dict
            ((asin, json.dumps(record)) for asin, record in _stream_pairs(source)),
        )
        self._db.commit()

    def get(self, asin: str) -> dict[str, Any]:
        row = self._db.execute("SELECT record FROM ins WHERE asin = ?", (asin,)).fetchone()
        return json.loads(row[0]) if row else {}

    def close(self) -> None:
        self._db.close()


def cache_key(sources: list[Path]) -> str:
    """Names the cache of a set of data files: their paths, sizes, mtimes and FORMAT."""
    stamp = [FORMAT] + [[str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns] for p in sources]
    return hashlib.sha256(json.dumps(stamp).encode()).hexdigest()[:20]


def build(folder: Path, target: Path) -> None:
    """Stream the data files of ``folder`` into a new cache folder ``target``."""
    products_file, attributes_file = _find(folder, PRODUCT_FILES), _find(folder, ATTRIBUTE_FILES)
    human_file = _find(folder, HUMAN_FILES, required=False)
    human = dict(_stream_pairs(human_file)) if human_file else {}
    attributes = _Attributes(target / "attributes.sqlite", attributes_file)
    index, offsets = IndexBuilder(), array("q")
    lows, highs = array("d"), array("d")  # each product's price or price range (high NaN: one price)
    instructed: list[tuple[int, int, tuple[str, ...]]] = []  # (row, goals, attributes) per product
    with_human: list[tuple[int, Product]] = []
    seen: set[str] = set()
    with open(target / "products.jsonl", "wb") as out:
        for raw in _stream(products_file, "item"):
            asin = raw["asin"]
            if asin == "nan" or len(asin) > 10 or asin in seen:  # WebShop's rule
                continue
            seen.add(asin)
            product = build_product(raw, attributes.get(asin), human.get(asin))
            row = len(offsets)
            offsets.append(out.tell())
            out.write(json.dumps(product, ensure_ascii=False).encode("utf-8") + b"\n")
            index.add(asin, search_text(product))
            lows.append(product["pricing"][0])
            highs.append(product["pricing"][1] if len(product["pricing"]) > 1 else math.nan)
            if product.get("instruction_text") is not None:
                atts = tuple(map(sys.intern, product["instruction_attributes"] or []))
                instructed.append((row, combinations(product), atts))
            if "instructions" in product:
                with_human.append((row, product))
    offsets.append(os.path.getsize(target / "products.jsonl"))
    attributes.close()
    (target / "attributes.sqlite").unlink()
    del human, seen

    rng = random.Random(GOAL_SEED)
    prices = np.array(
        [product_price([low] if math.isnan(high) else [low, high], rng) for low, high in zip(lows, highs)],
        dtype=np.float64,
    )
    after_prices = rng.getstate()

    rng.setstate(after_prices)  # WebShop with synthetic goals: one budget per product
    uppers = [price_upper(float(prices[row]), rng) for row, _, _ in instructed]
    counts: dict[str, int] = defaultdict(int)
    for _, n_goals, atts in instructed:
        for att in atts:
            counts[att] += n_goals
    starts = np.zeros(len(instructed), dtype=np.int64)
    np.cumsum([n for _, n, _ in instructed[:-1]], out=starts[1:])
    order = list(range(sum(n for _, n, _ in instructed)))
    random.Random(GOAL_SEED).shuffle(order)

    rng.setstate(after_prices)  # WebShop with human goals: one budget per kept instruction
    humans = [
        human_goal(product, record, price_upper(float(prices[row]), rng))
        for row, product in with_human
        for record in product["instructions"]
        if record["instruction_attributes"]
    ]
    random.Random(GOAL_SEED).shuffle(humans)

    index_dir = target / "index"
    index_dir.mkdir()
    index.save(index_dir)
    np.save(target / "offsets.npy", np.frombuffer(offsets, dtype=np.int64))
    np.save(target / "prices.npy", prices)
    np.save(target / "synthetic_rows.npy", np.array([r for r, _, _ in instructed], dtype=np.int64))
    np.save(target / "synthetic_starts.npy", starts)
    np.save(target / "synthetic_uppers.npy", np.array(uppers, dtype=np.float64))
    np.save(
        target / "synthetic_weights.npy",
        np.array([synthetic_weight(atts, counts) for _, _, atts in instructed], dtype=np.float64),
    )
    np.save(target / "synthetic_order.npy", np.array(order, dtype=np.int64))
    (target / "human_goals.json").write_text(json.dumps(humans, ensure_ascii=False), encoding="utf-8")
    meta = {
        "format": FORMAT,
        "products": len(prices),
        "human_goals": len(humans),
        "synthetic_goals": len(order),
        "sources": [str(p) for p in (products_file, attributes_file, human_file) if p],
    }
    (target / META).write_text(json.dumps(meta, indent=2), encoding="utf-8")


class Catalogue:
    """A built catalogue, opened from its cache folder; shared by every env of a process.

    Products and goals are read on demand (thread-safe: positional reads and numpy arrays);
    ``human_goals`` is the only list kept whole.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        meta = json.loads((folder / META).read_text(encoding="utf-8"))
        self.n_products: int = meta["products"]
        self.n_synthetic: int = meta["synthetic_goals"]
        self.sources = [Path(source) for source in meta["sources"]]  # the data files it was built from
        self.index = SearchIndex(folder / "index")
        self._rows = np.argsort(self.index.asins)  # asin lookup by binary search
        self._sorted = self.index.asins[self._rows]
        self._offsets = np.load(folder / "offsets.npy", mmap_mode="r")
        self._prices = np.load(folder / "prices.npy", mmap_mode="r")
        self._syn = {
            k: np.load(folder / f"synthetic_{k}.npy", mmap_mode="r")
            for k in ("rows", "starts", "uppers", "weights", "order")
        }
        self.human_goals: list[Goal] = json.loads((folder / "human_goals.json").read_text(encoding="utf-8"))
        self._fd = os.open(folder / "products.jsonl", os.O_RDONLY)
        self.product_at = functools.lru_cache(maxsize=8192)(self._read_product)

    def _read_product(self, row: int) -> Product:
        start, end = int(self._offsets[row]), int(self._offsets[row + 1])
        return json.loads(os.pread(self._fd, end - start, start))

    def row(self, asin: str) -> int | None:
        """The catalogue position of ``asin`` (case-sensitive, as WebShop's), or None."""
        if len(asin) > 10 or not asin.isascii():
            return None
        key = asin.encode("ascii")
        at = int(np.searchsorted(self._sorted, key))
        return int(self._rows[at]) if at < len(self._sorted) and self._sorted[at] == key else None

    def product(self, asin: str) -> Product | None:
        row = self.row(asin)
        return None if row is None else self.product_at(row)

    def price(self, asin: str) -> float:
        """The price WebShop's reward compares with the budget (drawn once, inside a range)."""
        row = self.row(asin)
        if row is None:
            raise KeyError(asin)
        return float(self._prices[row])

    def products(self) -> Iterator[Product]:
        """Every product, in catalogue order."""
        return (self._read_product(row) for row in range(self.n_products))

    def synthetic_goal(self, index: int) -> Goal:
        """Synthetic goal ``index`` of WebShop's shuffled list (built from its product)."""
        original = int(self._syn["order"][index])
        at = int(np.searchsorted(self._syn["starts"], original, side="right")) - 1
        product = self.product_at(int(self._syn["rows"][at]))
        return synthetic_goal(
            product,
            original - int(self._syn["starts"][at]),
            float(self._syn["uppers"][at]),
            float(self._syn["weights"][at]),
        )


def _open_or_build(folder: Path) -> Catalogue:
    sources = [
        p
        for p in (
            _find(folder, PRODUCT_FILES),
            _find(folder, ATTRIBUTE_FILES),
            _find(folder, HUMAN_FILES, required=False),
        )
        if p
    ]
    target = cache_root() / "webshop" / cache_key(sources)
    with _build_lock:
        if not (target / META).is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(target, ignore_errors=True)  # an unfinished folder is never used
            scratch = Path(tempfile.mkdtemp(prefix=f"{target.name}.", dir=target.parent))
            try:
                build(folder, scratch)
                try:
                    scratch.rename(target)  # atomic: a cache folder is complete or absent
                except OSError:
                    if not (target / META).is_file():  # another process may have won the race
                        raise
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    return Catalogue(target)


def data_folder(folder: str | None = None) -> Path:
    """The folder a catalogue is read from: ``folder``, else the full data when ``introspect
    data get webshop`` installed it, else the shipped 1000 products (blocking: a stat)."""
    return Path(folder).expanduser() if folder else installed("webshop") or DATA_DIR


def load_catalogue(folder: str | None = None) -> Catalogue:
    """The catalogue of a data folder (``data_folder``), built on first use.

    Blocking (file reads, and on the first use of a data folder the build): call it from a
    thread, or outside the event loop.
    """
    return _catalogue_of(data_folder(folder))


@functools.cache
def _catalogue_of(folder: Path) -> Catalogue:
    return _open_or_build(folder)
