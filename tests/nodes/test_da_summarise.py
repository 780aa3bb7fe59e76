"""Observation summarisation: within budget nothing is asked, beyond it the screen is summarised."""

from __future__ import annotations

from nodes.da.summarise import CUT, MAX_CHUNKS, chunks, fit, model_view
from nodes.runtime.llm import Caller, model_for

SCREEN = "\n".join(f"\t[{i}] link 'Product {i}'" for i in range(100))


def test_chunks_split_at_line_ends_within_the_size():
    parts = chunks(SCREEN, 300)
    assert "".join(parts) == SCREEN and all(len(p) <= 300 for p in parts)
    assert all(p.endswith("\n") for p in parts[:-1])
    assert chunks("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]


def test_fit_marks_a_cut():
    assert fit("short", 10) == "short"
    cut = fit("y" * 1000, 400)
    assert len(cut) == 400 and cut.endswith(CUT)


async def test_a_screen_within_budget_costs_no_call(write_script):
    spec = write_script([{"content": "unused"}])
    llm = Caller(spec, temperature=None, max_tokens=64, calls_before=0)
    assert await model_view(llm, "task", SCREEN, len(SCREEN)) == SCREEN
    assert llm.usage["model_calls"] == 0


async def test_a_long_screen_is_summarised_in_parts(write_script):
    budget = 600
    parts = len(chunks(SCREEN, budget))
    spec = write_script([{"content": f"[{i}] link 'Product {i}'"} for i in range(parts)])
    llm = Caller(spec, temperature=None, max_tokens=64, calls_before=0)
    view = await model_view(llm, "Buy product 3", SCREEN, budget)
    assert view.splitlines()[:2] == ["[0] link 'Product 0'", "[1] link 'Product 1'"]
    calls = model_for(spec, None, 64).calls
    assert len(calls) == parts == min(parts, MAX_CHUNKS)
    assert (
        "Buy product 3" in calls[0]["messages"][0].content and f"part 1 of {parts}" in calls[0]["messages"][0].content
    )
