"""The benchmark's driver and page (no SDK, no timing), and, in real environments of 0.5.1
built with kit.envs, that the probe's memory count sees the leak and its fix."""

from __future__ import annotations

import glob
import json
import os
import re
import sys
from pathlib import Path

import pytest

from bench import driver, page, probe
from kit import MatrixError, docs, releases
from kit.envs import InterpreterNotFound


def sample(scale: float, live: int | None = None, retained: int | None = None) -> dict:
    out = {
        "sdk": "0.5.1",
        "python": "3.11.7",
        "field_read_ns": 5.0 * scale,
        "agent_read_ns": 5.0 * scale,
        "source_agent_read_ns": 5.0 * scale,
        "construct_ns": 400.0 * scale,
        "guardrail_agent_read_ns": 5.0 * scale,
        "run1_per_s": 1000.0 / scale,
        "run3_per_s": 400.0 / scale,
    }
    if live is not None:  # memory is counted in round 1 only
        out.update(live_agents_after_release=live, retained_bytes_after_release=retained)
    return out


PATCHED = ["0.0.19", "0.5.1", "0.6.9", "0.24.0"]
PAIRS = driver.pairs(PATCHED, "0.6.0", "0.5.1", "0.24.0")
LEAKING = driver.compare([sample(1, 1000, 1000 * probe.PAYLOAD)], [sample(1, 0, 1)])


def data_of(results: dict[str, dict], rounds: int = 1) -> dict:
    """What `driver.run` returns for these `compare` results (pair id -> result)."""
    machine = {"python": "3.11.7", "cpu": "a CPU", "cores": 2, "rounds": rounds, "envs": 3}
    machine.update(load_before=0.5, load_after=0.75, wall_min=3.0, env_min=1.0, cpu_min=2.0)
    machine.update(envs_built=1)
    data = {"date": "2026-01-02", "fix": "0.6.0", "before_fix": "0.5.1"}
    data.update(method=driver.method(rounds), machine=machine)
    data.update(driver.results_data(results, PAIRS))
    return json.loads(json.dumps(data))


def test_medians_skip_text_and_take_the_middle_round():
    rounds = [sample(1, 1000, 3), sample(3, 1000, 1), sample(2, 1000, 2)]
    medians = driver.medians(rounds)
    assert "sdk" not in medians and "python" not in medians
    assert medians["field_read_ns"] == 10.0
    assert medians["retained_bytes_after_release"] == 2


def test_medians_of_memory_come_from_the_rounds_that_counted_it():
    medians = driver.medians([sample(1, 1000, 7), sample(2), sample(3)])
    assert medians["live_agents_after_release"] == 1000
    assert medians["retained_bytes_after_release"] == 7
    assert medians["field_read_ns"] == 10.0


def test_compare_gives_patched_over_unpatched_and_patched_memory():
    base = [sample(1, 1000, 110_000_000), sample(1), sample(1)]
    new = [sample(1.2, 0, 9_000_000), sample(1.1), sample(1.0)]
    result = driver.compare(base, new)
    assert result["field_read_ratio"] == result["construct_ratio"] == 1.1
    assert result["round_ratios"]["field_read_ratio"] == [1.2, 1.1, 1.0]
    assert result["run1_throughput_ratio"] == result["run_throughput_ratio"] == 0.909
    assert result["live_agents_after_release"] == 0
    assert result["baseline_live_agents_after_release"] == 1000
    assert result["retained_bytes_after_release"] == 9_000_000


def test_table_has_one_row_per_comparison():
    result = driver.compare([sample(1, 1000, 110_000_000)], [sample(2, 0, 9_000_000)])
    lines = page.table([{**PAIRS["0.5.1"], **result}])
    assert len(lines) == 3
    assert lines[0].count("|") == lines[1].count("|") == lines[2].count("|")
    assert lines[2].startswith("| 0.5.1 patched vs unpatched | 5.0 → 10.0 ns (2.00×; 2.00–2.00) |")
    assert lines[2].endswith("| 1000 → 0 | 110.0 → 9.0 MB |")


def test_upstream_fix_makes_trees_but_is_no_row_of_the_matrix():
    """The pair of upstream's fix builds an environment of a release that has no row."""
    assert PAIRS["0.6.0"]["candidate"] == ["0.6.0", "unpatched"]
    assert releases.any_release("0.6.0").published.startswith("2025-11-18")
    assert releases.any_release("0.5.1") is releases.RELEASES["0.5.1"]
    with pytest.raises(MatrixError):
        releases.release("0.6.0")


def test_run_throughput_ratio_is_the_worse_of_one_and_three_turns():
    slow3 = dict(sample(1, 0, 1), run3_per_s=300.0)
    result = driver.compare([sample(1, 1000, 1)], [slow3])
    assert result["run1_throughput_ratio"] == 1.0
    assert result["run_throughput_ratio"] == result["run3_throughput_ratio"] == 0.75


def test_json_keys_of_the_issue_are_in_every_result():
    data = data_of({"0.5.1": driver.compare([sample(1, 1000, 1)], [sample(1, 0, 1)])})
    result = data["versions"]["0.5.1"]
    for key in ("field_read_ratio", "agent_read_ratio", "construct_ratio"):
        assert key in result
    assert {"run_throughput_ratio", "live_agents_after_release"} <= result.keys()


def test_pairs_compare_each_series_and_upstreams_implementation():
    assert list(PAIRS) == [*PATCHED, "0.6.0", "upstream-0.24.0"]
    assert PAIRS["0.5.1"]["baseline"] == ["0.5.1", "unpatched"]
    assert PAIRS["0.5.1"]["candidate"] == ["0.5.1", "patched"]
    before_fix = ["0.5.1", "unpatched"]
    assert PAIRS["0.6.0"]["baseline"] == PAIRS["upstream-0.24.0"]["baseline"] == before_fix
    assert PAIRS["upstream-0.24.0"]["candidate"] == ["0.24.0", "unpatched"]
    leaking = [k for k, p in PAIRS.items() if p["leaks"]]
    assert leaking == ["0.0.19", "0.5.1", "0.6.0", "upstream-0.24.0"]
    assert [p.get("upstream") for p in PAIRS.values()][-2:] == ["0.6.0", "0.24.0"]


def test_run_refuses_an_unknown_pair_and_lists_the_known_ones():
    with pytest.raises(MatrixError, match=r"no pair 9\.9\.9; known pairs: 0\.0\.19, .*0\.6\.0"):
        driver.run(["0.5.1", "9.9.9"], 1, False, print)


def test_leak_problems_flag_a_pre_fix_baseline_that_shows_no_leak():
    hidden = driver.compare([sample(1, 0, 5_000_000)], [sample(1, 0, 1)])
    no_bytes = driver.compare([sample(1, 1000, 5_000_000)], [sample(1, 0, 1)])
    assert driver.leak_problems(data_of({"0.5.1": LEAKING, "0.6.9": hidden})) == []
    problems = driver.leak_problems(data_of({"0.0.19": hidden, "0.6.0": no_bytes}))
    assert len(problems) == 2
    assert problems[0].startswith("0.0.19-unpatched: no live agent")
    assert problems[1].startswith("0.5.1-unpatched: 1000 live agents but only 5000000 bytes")


def test_check_targets_judge_the_worst_patched_release():
    good = driver.compare([sample(1, 1000, 1)], [sample(1.0, 0, 1)])
    bad = driver.compare([sample(1, 1000, 1)], [sample(1.2, 3, 1)])
    checks = {c["key"]: c for c in driver.check_targets({"0.5.1": good, "0.6.9": bad})}
    assert checks["field_read_ratio"] == {
        "key": "field_read_ratio",
        "op": "<=",
        "bound": 1.05,
        "worst": "0.6.9",
        "value": 1.2,
        "met": False,
    }
    assert checks["run_throughput_ratio"]["value"] == 0.833
    assert checks["live_agents_after_release"]["worst"] == "0.6.9"
    assert all(c["met"] for c in driver.check_targets({"0.5.1": good}))


def test_data_keeps_upstream_out_of_the_targets_and_the_page_shows_it_beside_ours():
    ours = driver.compare([sample(1, 1000, 1)], [sample(1.0, 0, 1)])
    upstream = driver.compare([sample(1, 1000, 1)], [sample(60, 0, 1)])
    data = data_of({"0.5.1": ours, "0.6.0": upstream, "upstream-0.24.0": upstream})
    assert list(data["versions"]) == ["0.5.1"]
    assert list(data["upstream"]) == ["0.6.0", "0.24.0"]
    assert data["upstream"]["0.24.0"]["baseline"] == ["0.5.1", "unpatched"]
    assert all(t["met"] and t["worst"] == "0.5.1" for t in data["targets"])
    text = driver.render(data)
    assert "| upstream 0.24.0 vs 0.5.1 (both unpatched) | 5.0 → 300.0 ns (60.00×" in text
    assert "| | our series on 0.5.1 | upstream 0.6.0 | upstream 0.24.0 |" in text
    assert "| field read | 1.00× (1.00–1.00) | 60.00× (60.00–60.00) | 60.00×" in text
    assert "`live_agents_after_release = 0`: **met**; worst 0 (0.5.1)." in text


def test_the_page_judges_the_targets_from_the_data():
    slow = driver.compare([sample(1, 1000, 1), sample(1)], [sample(1.2, 0, 1), sample(1.1)])
    text = driver.render(data_of({"0.5.1": LEAKING, "0.6.9": slow}, rounds=2))
    assert (
        "- Field read, `field_read_ratio ≤ 1.05`: **missed**; worst 1.150× "
        "(0.6.9; per round 1.10–1.20)." in text
    )
    assert "- Construction, `construct_ratio ≤ 1.10`: **missed**; worst 1.150×" in text
    assert "`live_agents_after_release = 0`: **met**" in text
    assert "Memory check: every unpatched release before 0.6.0 measured here" in text


def test_every_number_on_the_page_comes_from_the_data():
    """Method parameters, the machine line and the verdicts change with the data; the prose
    has no figure of its own (only the data's, and names such as `mallinfo2()`)."""
    data = data_of({"0.5.1": LEAKING})
    sentinels = {"memory_runs": 1234, "payload_bytes": 56789, "repeat": 7, "min_time_ms": 31}
    sentinels.update(run_repeat=8, min_run_time_ms=61, unroll=21, python="3.19", rounds=9)
    data["method"].update(sentinels)
    data["machine"].update(cpu="CPU X", cores=3, load_before=4.25, wall_min=8.5, envs_built=2)
    text = driver.render(data)
    assert "after 1,234 runs" in text and "holds 56,789 bytes" in text
    assert "- 9 rounds; a round runs every pair" in text
    assert "best of 7 passes of at least 31 ms" in text and "8 passes of at least 61 ms" in text
    assert (
        "> CPython 3.11.7 on CPU X, 3 cores (load average 4.2 before, 0.8 after); 1 round;" in text
    )
    assert "8.5 min wall" in text and "(2 built, 1 reused, warm-up included)" in text
    prose = re.sub(r"\|.*\|\n|> .*\n|`[^`]*`", "", text)  # tables, machine line, code
    figures = set(re.findall(r"\d+(?:[.,]\d+)*", prose))
    method = {"1,234", "56,789", "7", "31", "8", "61", "21", "3.19", "9"}
    verdicts = {"1.000", "1.00", "0"}  # every ratio of LEAKING is 1, and no agent stays live
    assert figures <= method | verdicts | {"0.5.1", "0.6.0"}
    assert "**met**" in text and "**missed**" not in text


def test_the_page_is_what_its_published_data_renders(tmp_path: Path):
    data = data_of({"0.5.1": LEAKING, "0.6.0": LEAKING})
    page_file = docs.publish("bench", data, driver.render, docs=tmp_path)
    assert page_file.read_text().startswith("# What the agent-release fix costs\n")
    docs.check("bench", driver.render, "bench -- --publish", docs=tmp_path)
    page_file.write_text(page_file.read_text().replace("**met**", "**missed**"))
    with pytest.raises(MatrixError, match="is not what"):
        docs.check("bench", driver.render, "bench -- --publish", docs=tmp_path)


def test_a_slow_phase_of_the_machine_is_scaled_out_by_the_reference():
    fast = dict(sample(1, 1000, 1), ref_ns=200.0, run_ref_ns=200.0)
    slow = dict(sample(1.6), ref_ns=320.0, run_ref_ns=320.0)  # everything 1.6 times slower
    patched = [dict(sample(1.05, 0, 1), ref_ns=200.0, run_ref_ns=200.0)]
    patched.append(dict(sample(1.05), ref_ns=200.0, run_ref_ns=200.0))
    result = driver.compare([fast, slow], patched)
    assert result["round_ratios"]["field_read_ratio"] == [1.05, 1.05]
    assert result["run1_throughput_ratio"] == 0.952
    assert result["medians"]["baseline"]["field_read_ns"] == pytest.approx(5.0)
    assert result["rounds"]["baseline"][1]["field_read_ns"] == pytest.approx(8.0)  # as measured


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallinfo2() needs glibc")
def test_memory_count_sees_the_leak_of_an_unpatched_release_and_its_fix(monkeypatch):
    """The measurement is broken if it cannot see the bug: every agent of 0.5.1 outlives its
    run while the caller keeps the results, and so do their payloads; patched, none does.
    Builds (or reuses) the bench's own environments of 0.5.1."""
    pyenv = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin")))
    monkeypatch.setenv("PATH", os.pathsep.join([*pyenv, os.environ["PATH"]]))  # as the noxfile
    envs = [("0.5.1", "unpatched"), ("0.5.1", "patched")]
    try:
        pythons = driver.prepare(envs, rebuild=False, log=print)["pythons"]
    except InterpreterNotFound as exc:
        pytest.skip(str(exc))
    unpatched, patched = (driver.probe_in(pythons[env], "memory") for env in envs)
    assert unpatched["sdk"] == patched["sdk"] == "0.5.1"
    assert unpatched["memory_counted_by"] == patched["memory_counted_by"] == "mallinfo2"
    assert unpatched["live_agents_after_release"] == probe.MEMORY_RUNS
    assert unpatched["retained_bytes_after_release"] >= probe.MEMORY_RUNS * probe.PAYLOAD
    assert patched["live_agents_after_release"] == 0
    assert patched["retained_bytes_after_release"] < probe.MEMORY_RUNS * probe.PAYLOAD
