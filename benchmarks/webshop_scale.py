"""WebShop at scale: loading a large catalogue (streamed, cached on disk) in time and memory.

WebShop's full data (1.18M products) is not available offline, so a large catalogue is made
by replicating the shipped 1000 products under new asins (``NNN`` + the last 7 characters of
the original asin), with their attribute records and human instructions, into a temporary
folder in WebShop's file layout (plain JSON, as WebShop ships it). Each measurement runs in
a fresh Python process, which reports its wall time, CPU time (on a busy machine wall time
can be several times the CPU time) and peak resident memory (ru_maxrss):

* first load: stream the files and build the cache (processed products, search index, goals);
* cached load: a new process opening the cache, then one episode (reset, search, open the
  item, choose its options, buy) and search latencies;
* for comparison, what WebShop's loader does first: ``json.load`` of the products file.

Figures are printed and written to benchmarks/results/webshop_scale.json. Replicated products
share their vocabulary, so the index's vocabulary stays that of 1000 products; everything
else (products, postings, goals) grows with the catalogue.
Usage: .venv/bin/python benchmarks/webshop_scale.py [--products 100000] [--small]
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import parse_args, write_report  # noqa: E402

SHIPPED = ROOT / "envs" / "data" / "webshop"

CHILD_PRELUDE = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
started = time.perf_counter()
"""
CHILD_REPORT = """
report["seconds"] = round(time.perf_counter() - started, 3)
usage = resource.getrusage(resource.RUSAGE_SELF)
report["cpu_s"] = round(usage.ru_utime + usage.ru_stime, 3)
report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
print(json.dumps(report))
"""
FIRST_LOAD = """
from envs.webshop.catalogue import load_catalogue
catalogue = load_catalogue({data!r})
report = {{"products": catalogue.n_products, "human_goals": len(catalogue.human_goals),
          "synthetic_goals": catalogue.n_synthetic, "cache": str(catalogue.folder)}}
"""
CACHED_LOAD = """
import asyncio, statistics
from envs.webshop import WebShopEnv
from envs.webshop.catalogue import load_catalogue
catalogue = load_catalogue({data!r})
report = {{"open_s": round(time.perf_counter() - started, 3)}}

async def episode():
    env = WebShopEnv(data_dir={data!r})
    t = time.perf_counter(); await env.reset("12"); report["reset_ms"] = round(1000 * (time.perf_counter() - t), 2)
    goal = env.goal
    t = time.perf_counter(); res = await env.step(f"search[{{goal['name']}}]")
    report["first_search_ms"] = round(1000 * (time.perf_counter() - t), 2)
    await env.step(f"click[{{res.observation.info['item_ids'][0]}}]")
    t = time.perf_counter(); bought = await env.step("click[Buy Now]")
    report["first_buy_ms_incl_pos_tagger_load"] = round(1000 * (time.perf_counter() - t), 2)
    report["bought_reward"] = round(bought.reward, 4)

asyncio.run(episode())
stride = max(1, catalogue.n_products // 200)
titles = [catalogue.product_at(row)["Title"] for row in range(0, catalogue.n_products, stride)]
times = []
for title in titles:
    t = time.perf_counter(); catalogue.index._search(title.lower()); times.append(1000 * (time.perf_counter() - t))
report["search_uncached_median_ms"] = round(statistics.median(times), 2)
report["search_uncached_max_ms"] = round(max(times), 2)
t = time.perf_counter()
goals = [catalogue.synthetic_goal(i) for i in range(0, catalogue.n_synthetic, max(1, catalogue.n_synthetic // 1000))]
report["synthetic_goal_ms"] = round(1000 * (time.perf_counter() - t) / len(goals), 3)
"""
JSON_LOAD = """
products = json.load(open({path!r}))
report = {{"products": len(products)}}
"""


def replicate(folder: Path, n_products: int) -> None:
    """Write ``n_products`` replicated products, their attributes and human instructions."""
    raws = json.loads(gzip.open(SHIPPED / "items_shuffle_1000.json.gz").read())
    attributes = json.loads(gzip.open(SHIPPED / "items_ins_v2_1000.json.gz").read())
    human = json.loads((SHIPPED / "items_human_ins.json").read_text())
    copies = -(-n_products // len(raws))

    def renamed(asin: str, k: int) -> str:
        return f"{k:03d}{asin[3:]}"

    with open(folder / "items_shuffle.json", "w") as f, open(folder / "items_ins_v2.json", "w") as g:
        f.write("[")
        g.write("{")
        written = 0
        for k in range(copies):
            for raw in raws:
                if written == n_products:
                    break
                f.write(("," if written else "") + json.dumps({**raw, "asin": renamed(raw["asin"], k)}))
                if raw["asin"] in attributes:
                    g.write(
                        ("," if g.tell() > 1 else "")
                        + json.dumps(renamed(raw["asin"], k))
                        + ":"
                        + json.dumps(attributes[raw["asin"]])
                    )
                written += 1
        f.write("]")
        g.write("}")
    human_out = {
        renamed(asin, k): [{**r, "asin": renamed(asin, k)} for r in records]
        for k in range(copies)
        for asin, records in human.items()
    }
    (folder / "items_human_ins.json").write_text(json.dumps(human_out))


def in_child(code: str, cache: Path) -> dict:
    env = {"INTROSPECT_CACHE": str(cache), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD_PRELUDE.format(root=str(ROOT)) + code + CHILD_REPORT],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(n_products: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="webshop-scale-") as tmp:
        data, cache = Path(tmp) / "data", Path(tmp) / "cache"
        data.mkdir()
        started = time.perf_counter()
        replicate(data, n_products)
        sizes = {p.name: round(p.stat().st_size / 2**20, 1) for p in data.iterdir()}
        generated_s = time.perf_counter() - started
        first = in_child(FIRST_LOAD.format(data=str(data)), cache)
        cached = in_child(CACHED_LOAD.format(data=str(data)), cache)
        json_load = in_child(JSON_LOAD.format(path=str(data / "items_shuffle.json")), cache)
        cache_mb = sum(p.stat().st_size for p in Path(first["cache"]).rglob("*") if p.is_file()) / 2**20
    first.pop("cache")
    return {
        "products": n_products,
        "data_files_mb": sizes,
        "generate_s": round(generated_s, 1),
        "first_load_build": first,
        "cache_mb": round(cache_mb, 1),
        "cached_load_and_episode": cached,
        "json_load_products_file_for_comparison": json_load,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--products", type=int, default=100_000)
    args = parse_args(parser, small={"products": 1000})  # the shipped catalogue, once
    result = main(args.products)
    print(json.dumps(result, indent=2))
    write_report("webshop_scale", result, args.small)
