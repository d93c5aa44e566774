"""The pure helpers of the benchmark (no SDK, no timing) and the reference release it builds."""

from __future__ import annotations

import pytest

import sdk_matrix
from bench import bench_agent_release as bench


def sample(scale: float, live: int, retained: int) -> dict:
    return {
        "sdk": "0.5.1",
        "python": "3.11.7",
        "field_read_ns": 5.0 * scale,
        "agent_read_ns": 5.0 * scale,
        "source_agent_read_ns": 5.0 * scale,
        "construct_ns": 400.0 * scale,
        "run1_per_s": 1000.0 / scale,
        "run3_per_s": 400.0 / scale,
        "live_agents_after_release": live,
        "retained_bytes_after_release": retained,
    }


def test_medians_skip_text_and_take_the_middle_round():
    rounds = [sample(1, 1000, 3), sample(3, 1000, 1), sample(2, 1000, 2)]
    medians = bench.medians(rounds)
    assert "sdk" not in medians and "python" not in medians
    assert medians["field_read_ns"] == 10.0
    assert medians["retained_bytes_after_release"] == 2


def test_compare_gives_patched_over_unpatched_and_patched_memory():
    base = [sample(1, 1000, 110_000_000)] * 3
    new = [sample(1.2, 0, 9_000_000), sample(1.1, 0, 9_000_000), sample(1.0, 0, 9_000_000)]
    result = bench.compare(base, new)
    assert result["field_read_ratio"] == result["construct_ratio"] == 1.1
    assert result["round_ratio_range"]["field_read_ratio"] == [1.0, 1.2]
    assert result["run1_throughput_ratio"] == result["run_throughput_ratio"] == 0.909
    assert result["live_agents_after_release"] == 0
    assert result["baseline_live_agents_after_release"] == 1000
    assert result["retained_bytes_after_release"] == 9_000_000


def test_table_has_one_row_per_comparison():
    result = bench.compare([sample(1, 1000, 110_000_000)], [sample(2, 0, 9_000_000)])
    lines = bench.format_table({"0.5.1 patched vs unpatched": result}).splitlines()
    assert len(lines) == 3
    assert lines[0].count("|") == lines[1].count("|") == lines[2].count("|")
    assert lines[2].startswith("| 0.5.1 patched vs unpatched | 5.0 → 10.0 ns (2.00×; 2.00–2.00) |")
    assert lines[2].endswith("| 1000 → 0 | 110.0 → 9.0 MB |")


def test_upstream_fix_makes_trees_but_is_no_row_of_the_matrix():
    assert sdk_matrix.any_release("0.6.0").published.startswith("2025-11-18")
    assert sdk_matrix.any_release("0.5.1") is sdk_matrix.RELEASES["0.5.1"]
    with pytest.raises(sdk_matrix.MatrixError):
        sdk_matrix.release("0.6.0")
