"""The pure helpers of the benchmark (no SDK, no timing), the reference release it builds, and,
where `nox -s bench` has built the environment, that its memory count sees the leak."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import sdk_matrix
from bench import bench_agent_release as bench


def sample(scale: float, live: int | None = None, retained: int | None = None) -> dict:
    out = {
        "sdk": "0.5.1",
        "python": "3.11.7",
        "field_read_ns": 5.0 * scale,
        "agent_read_ns": 5.0 * scale,
        "source_agent_read_ns": 5.0 * scale,
        "construct_ns": 400.0 * scale,
        "run1_per_s": 1000.0 / scale,
        "run3_per_s": 400.0 / scale,
    }
    if live is not None:  # memory is counted in round 1 only
        out.update(live_agents_after_release=live, retained_bytes_after_release=retained)
    return out


def test_medians_skip_text_and_take_the_middle_round():
    rounds = [sample(1, 1000, 3), sample(3, 1000, 1), sample(2, 1000, 2)]
    medians = bench.medians(rounds)
    assert "sdk" not in medians and "python" not in medians
    assert medians["field_read_ns"] == 10.0
    assert medians["retained_bytes_after_release"] == 2


def test_medians_of_memory_come_from_the_rounds_that_counted_it():
    medians = bench.medians([sample(1, 1000, 7), sample(2), sample(3)])
    assert medians["live_agents_after_release"] == 1000
    assert medians["retained_bytes_after_release"] == 7
    assert medians["field_read_ns"] == 10.0


def test_compare_gives_patched_over_unpatched_and_patched_memory():
    base = [sample(1, 1000, 110_000_000), sample(1), sample(1)]
    new = [sample(1.2, 0, 9_000_000), sample(1.1), sample(1.0)]
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


def test_run_throughput_ratio_is_the_worse_of_one_and_three_turns():
    slow3 = dict(sample(1, 0, 1), run3_per_s=300.0)
    result = bench.compare([sample(1, 1000, 1)], [slow3])
    assert result["run1_throughput_ratio"] == 1.0
    assert result["run_throughput_ratio"] == result["run3_throughput_ratio"] == 0.75


def test_json_keys_of_the_issue_are_in_every_result():
    result = bench.compare([sample(1, 1000, 1)], [sample(1, 0, 1)])
    for key in ("field_read_ratio", "agent_read_ratio", "construct_ratio"):
        assert key in result
    assert {"run_throughput_ratio", "live_agents_after_release"} <= result.keys()


PATCHED = ["0.0.19", "0.5.1", "0.6.9", "0.24.0"]


def test_pairs_compare_each_series_and_upstreams_implementation():
    pairs = bench.pairs(PATCHED, "0.6.0", "0.5.1", "0.24.0")
    assert list(pairs) == [*PATCHED, "0.6.0", "upstream-0.24.0"]
    assert pairs["0.5.1"]["baseline"] == ("0.5.1", "unpatched")
    assert pairs["0.5.1"]["candidate"] == ("0.5.1", "patched")
    before_fix = ("0.5.1", "unpatched")
    assert pairs["0.6.0"]["baseline"] == pairs["upstream-0.24.0"]["baseline"] == before_fix
    assert pairs["upstream-0.24.0"]["candidate"] == ("0.24.0", "unpatched")
    leaking = [k for k, p in pairs.items() if p["leaks"]]
    assert leaking == ["0.0.19", "0.5.1", "0.6.0", "upstream-0.24.0"]
    assert [p.get("upstream") for p in pairs.values()][-2:] == ["0.6.0", "0.24.0"]


def test_leak_problems_flag_a_pre_fix_baseline_that_shows_no_leak():
    pairs = bench.pairs(PATCHED, "0.6.0", "0.5.1", "0.24.0")
    leaking = bench.compare([sample(1, 1000, 1000 * bench.PAYLOAD)], [sample(1, 0, 1)])
    hidden = bench.compare([sample(1, 0, 5_000_000)], [sample(1, 0, 1)])
    no_bytes = bench.compare([sample(1, 1000, 5_000_000)], [sample(1, 0, 1)])
    assert bench.leak_problems({"0.5.1": leaking, "0.6.9": hidden}, pairs) == []
    problems = bench.leak_problems({"0.0.19": hidden, "0.6.0": no_bytes}, pairs)
    assert len(problems) == 2
    assert problems[0].startswith("0.0.19-unpatched: no live agent")
    assert problems[1].startswith("0.5.1-unpatched: 1000 live agents but only 5000000 bytes")


def test_check_targets_judge_the_worst_patched_release():
    good = bench.compare([sample(1, 1000, 1)], [sample(1.0, 0, 1)])
    bad = bench.compare([sample(1, 1000, 1)], [sample(1.2, 3, 1)])
    checks = {c["target"]: c for c in bench.check_targets({"0.5.1": good, "0.6.9": bad})}
    assert checks["field_read_ratio <= 1.05"] == {
        "target": "field_read_ratio <= 1.05",
        "worst": "0.6.9",
        "value": 1.2,
        "met": False,
    }
    assert checks["run_throughput_ratio >= 0.99"]["value"] == 0.833
    assert checks["live_agents_after_release == 0"]["worst"] == "0.6.9"
    assert all(c["met"] for c in bench.check_targets({"0.5.1": good}))


def test_summary_keeps_upstream_out_of_the_targets():
    pairs = bench.pairs(PATCHED, "0.6.0", "0.5.1", "0.24.0")
    ours = bench.compare([sample(1, 1000, 1)], [sample(1.0, 0, 1)])
    upstream = bench.compare([sample(1, 1000, 1)], [sample(60, 0, 1)])
    results = {"0.5.1": ours, "0.6.0": upstream, "upstream-0.24.0": upstream}
    text, out = bench.summary(results, pairs, "0.5.1", "a machine")
    assert list(out["versions"]) == ["0.5.1"]
    assert list(out["upstream"]) == ["0.6.0", "0.24.0"]
    assert out["upstream"]["0.24.0"]["baseline"] == "0.5.1"
    assert all(c["met"] and c["worst"] == "0.5.1" for c in out["targets"])
    assert text.startswith("a machine\n| comparison |")
    assert "| upstream 0.24.0 vs 0.5.1 (both unpatched) | 5.0 → 300.0 ns (60.00×" in text
    assert text.endswith("live_agents_after_release == 0: worst 0 (0.5.1), met")


UNPATCHED_ENV = Path(__file__).resolve().parents[1] / ".nox/bench-envs/0.5.1-unpatched/bin/python"


@pytest.mark.skipif(
    not UNPATCHED_ENV.exists() or not sys.platform.startswith("linux"),
    reason="needs the 0.5.1-unpatched environment of `nox -s bench` (and glibc)",
)
def test_memory_count_sees_the_leak_of_an_unpatched_release_before_the_fix():
    """The measurement is broken if it cannot see the bug: every agent of 0.5.1 outlives its
    run while the caller keeps the results, and so do their payloads."""
    proc = subprocess.run(
        [str(UNPATCHED_ENV), "bench/bench_agent_release.py", "memory"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONMALLOC": "malloc"},
        cwd=UNPATCHED_ENV.parents[4],
        check=True,
    )
    out = json.loads(proc.stdout)
    assert out["sdk"] == "0.5.1"
    assert out["memory_counted_by"] == "mallinfo2"
    assert out["live_agents_after_release"] == bench.MEMORY_RUNS
    assert out["retained_bytes_after_release"] >= bench.MEMORY_RUNS * bench.PAYLOAD


def test_a_slow_phase_of_the_machine_is_scaled_out_by_the_reference():
    fast = dict(sample(1, 1000, 1), ref_ns=200.0, run_ref_ns=200.0)
    slow = dict(sample(1.6), ref_ns=320.0, run_ref_ns=320.0)  # everything 1.6 times slower
    patched = [dict(sample(1.05, 0, 1), ref_ns=200.0, run_ref_ns=200.0)]
    patched.append(dict(sample(1.05), ref_ns=200.0, run_ref_ns=200.0))
    result = bench.compare([fast, slow], patched)
    assert result["round_ratio_range"]["field_read_ratio"] == [1.05, 1.05]
    assert result["run1_throughput_ratio"] == 0.952
    assert result["medians"]["baseline"]["field_read_ns"] == pytest.approx(5.0)
    assert result["rounds"]["baseline"][1]["field_read_ns"] == pytest.approx(8.0)  # as measured
