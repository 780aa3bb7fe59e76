"""The shipped LASER demo (WebShop goal 0 bought for reward 1 in 15 model calls) as test
material: its script without the demo's imitation latency, whole or cut short."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.openai_stub import Reply

ROOT = Path(__file__).resolve().parents[2]
DEMO = json.loads((ROOT / "introspect/demos/laser.json").read_text())
SCRIPT = ROOT / "introspect/demos" / DEMO["recording"]
REPLIES = [json.loads(line) for line in SCRIPT.read_text().splitlines() if line.strip()]
# The demo's last replies: the item state's Buy_Now (rationale, call) and its options step (the
# customisation types, the values' rationale, the forced call). A test repeats them to buy again.
BUY_REPLIES = 5


def write_demo_script(path: Path, replies: int | None = None) -> str:
    """The demo's first ``replies`` replies (all by default) as a plain script (no delays, no
    recorded requests) at ``path``; returns the ``scripted:`` model spec."""
    lines = [{k: r[k] for k in ("content", "tool_calls") if k in r} for r in REPLIES[:replies]]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return f"scripted:{path}"


def demo_replies() -> list[Reply]:
    """The demo's replies for the OpenAI-compatible stub."""
    return [Reply(content=r["content"], tool_calls=r.get("tool_calls", [])) for r in REPLIES]
