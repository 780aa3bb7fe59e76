"""Which differences are decided (introspect.report.decisions): the paired test against McNemar's
exact test computed by hand, Holm's adjustment of known p-values, and the report's table."""

from __future__ import annotations

import pytest

from introspect.report.decisions import decisions_table, holm, paired_p
from introspect.report.load import configurations
from tests.graphs.test_report_tables import cells, row, write


def test_paired_p_on_successes_is_mcnemars_exact_test():
    # 5 discordant tasks, all won by B: 2 * 0.5^5
    assert paired_p([0] * 5 + [1] * 3, [1] * 5 + [1] * 3) == pytest.approx(0.0625)
    # 6 won by B, 1 by A: 2 * P(X <= 1 | 7, 0.5) = 2 * (1 + 7) / 128
    assert paired_p([0] * 6 + [1], [1] * 6 + [0]) == pytest.approx(0.125)
    assert paired_p([1, 0], [1, 0]) == 1.0  # no discordant task: nothing tells them apart


def test_paired_p_past_the_exact_limit_is_drawn_and_seeded():
    a, b = [0.0] * 20, [1.0] * 20  # exact: 2 / 2^20; drawn: (1 + 0) / (1 + 10000)
    assert paired_p(a, b) == pytest.approx(1 / 10001)
    mixed_a, mixed_b = [0.0] * 12 + [1.0] * 8, [1.0] * 12 + [0.0] * 8
    assert paired_p(mixed_a, mixed_b) == paired_p(mixed_a, mixed_b)  # the same report every time
    # 12 vs 8 discordant: 2 * P(X <= 8 | 20, 0.5) = 0.5034
    assert paired_p(mixed_a, mixed_b) == pytest.approx(0.5034, abs=0.02)


def test_holm_adjusts_known_p_values():
    # sorted 0.005, 0.01, 0.03, 0.04 -> 4 x 0.005, 3 x 0.01, 2 x 0.03, max(0.06, 1 x 0.04)
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_the_report_says_which_differences_are_decided(tmp_path):
    base = [row(str(t), settings={}, fingerprint="a") for t in range(8)]
    better = [row(str(t), settings={"x": 1}, fingerprint="b", success=True) for t in range(8)]
    same = [row(str(t), settings={"x": 2}, fingerprint="c", success=t == 0) for t in range(8)]
    table = decisions_table(configurations([write(tmp_path / "r.jsonl", base + better + same)]))
    assert table is not None and "2 comparison(s)" in table.note
    # 8 of 8 won: p = 2 / 256 = 0.0078, Holm 2 x 0.0078; 1 of 1 won: p = 1, Holm 1
    assert cells(table, "webshop|#1 laser webshop|#2 laser webshop")[3:] == ["8", "+100.0", "0.0078", "0.0156", "yes"]
    assert cells(table, "webshop|#1 laser webshop|#3 laser webshop")[3:] == ["8", "+12.5", "1.0000", "1.0000", "no"]
    assert decisions_table(configurations([write(tmp_path / "one.jsonl", base)])) is None
