"""What `nox -s bench` runs: pairs of SDK environments measured in rounds of fresh processes
(bench/probe.py), compared, judged against the issue's targets, and the page docs/bench.md
(rendered by bench/page.py from the data `run` returns). The method is on that page.

Why it is run so: on a machine shared with other work, a figure of one process is noise. A
round runs, per pair, one fresh `timing` process per side, back to back, in alternating order,
so a slow phase of the machine hits both sides or neither; each ratio is the median of the
per-round ratios, after `at_common_speed` has scaled every process to the fastest reference of
its pair. ROUNDS is the fewest rounds whose median ignores two bad rounds; importing the SDK is
most of each process, so more rounds cost more than longer passes would.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import time
from typing import Callable

from kit import MatrixError, version_key
from kit.envs import ENVS, environment
from kit.releases import CI_PYTHON, LAST_BEFORE_FIX, UPSTREAM_FIX, patched_versions

from . import probe

ROUNDS = 5
SIDES = ("baseline", "candidate")

# metric -> the key of its ratio (new / base): times in ns per call, throughputs in runs per s
TIMES = {
    "field_read_ns": "field_read_ratio",
    "agent_read_ns": "agent_read_ratio",
    "source_agent_read_ns": "source_agent_read_ratio",
    "construct_ns": "construct_ratio",
    "guardrail_agent_read_ns": "guardrail_agent_read_ratio",
}
RATES = {"run1_per_s": "run1_throughput_ratio", "run3_per_s": "run3_throughput_ratio"}
RATIOS = {**TIMES, **RATES}
MEMORY = ("live_agents_after_release", "retained_bytes_after_release")

# The targets, for the worst patched release: key -> (comparison, bound)
TARGETS = {
    "field_read_ratio": ("<=", 1.05),
    "construct_ratio": ("<=", 1.10),
    "guardrail_agent_read_ratio": ("<=", 1.05),
    "run_throughput_ratio": (">=", 0.99),
    "live_agents_after_release": ("==", 0),
}


# --- comparing --------------------------------------------------------------------------------


def pairs(patched: list[str], fix: str, before_fix: str, newest: str) -> dict[str, dict]:
    """What `nox -s bench` compares: pair id -> label, baseline and candidate environment
    [version, variant], and whether the baseline must show the leak. Each patched release
    against itself unpatched; upstream's fix (id `fix`) and upstream's newest release (id
    `upstream-<newest>`) against the last release before the fix, all unpatched."""
    out = {
        v: {
            "label": f"{v} patched vs unpatched",
            "baseline": [v, "unpatched"],
            "candidate": [v, "patched"],
            "leaks": version_key(v) < version_key(fix),
        }
        for v in patched
    }
    for key, v in ((fix, fix), (f"upstream-{newest}", newest)):
        out[key] = {
            "label": f"upstream {v} vs {before_fix} (both unpatched)",
            "baseline": [before_fix, "unpatched"],
            "candidate": [v, "unpatched"],
            "leaks": True,
            "upstream": v,
        }
    return out


def medians(samples: list[dict]) -> dict[str, float]:
    """The median of every numeric metric over the rounds of one environment that have it
    (memory is counted in round 1 only)."""
    keys = dict.fromkeys(key for s in samples for key in s)
    return {
        key: statistics.median(s[key] for s in samples if key in s)
        for key in keys
        if not any(isinstance(s.get(key), str) for s in samples)
    }


def ratio(new: float, base: float) -> float:
    return round(new / base, 3)


def at_common_speed(base_samples: list[dict], new_samples: list[dict]) -> tuple[list, list]:
    """The samples as if every process had run at the fastest speed seen in the pair: a
    process's times are scaled by the lowest reference / its reference (probe.REFERENCE, timed
    in the same passes), its rates by the inverse. Samples without a reference are left as
    they are."""
    everything = base_samples + new_samples
    scaled = {}
    for metrics, ref_key in ((TIMES, "ref_ns"), (RATES, "run_ref_ns")):
        refs = [s[ref_key] for s in everything if ref_key in s]
        if refs:
            scaled[ref_key] = (metrics, min(refs))

    def correct(sample: dict) -> dict:
        out = dict(sample)
        for ref_key, (metrics, common) in scaled.items():
            if ref_key not in sample:
                continue
            factor = common / sample[ref_key]
            for m in metrics:
                out[m] = sample[m] * factor if m in TIMES else sample[m] / factor
        return out

    return [correct(s) for s in base_samples], [correct(s) for s in new_samples]


def compare(base_samples: list[dict], new_samples: list[dict]) -> dict:
    """Per metric, the median of the per-round ratios new/base (a round measures both sides
    back to back, so the pairing cancels slow phases of the shared machine) and the ratios
    themselves, after `at_common_speed`, and the memory left after release;
    `run_throughput_ratio` is the worse of the one-turn and three-turn ratios. `rounds` keeps
    the samples as measured."""
    raw = {"baseline": base_samples, "candidate": new_samples}
    base_samples, new_samples = at_common_speed(base_samples, new_samples)
    base, new = medians(base_samples), medians(new_samples)
    per_round = {
        key: [ratio(n[m], b[m]) for b, n in zip(base_samples, new_samples)]
        for m, key in RATIOS.items()
    }
    out = {key: round(statistics.median(r), 3) for key, r in per_round.items()}
    out["run_throughput_ratio"] = min(out["run1_throughput_ratio"], out["run3_throughput_ratio"])
    out.update({key: new[key] for key in MEMORY})
    out.update({f"baseline_{key}": base[key] for key in MEMORY})
    out["round_ratios"] = per_round
    out["medians"] = {"baseline": base, "candidate": new}
    out["rounds"] = raw
    return out


def check_targets(results: dict[str, dict]) -> list[dict]:
    """Per target, the worst patched release (`results`: version -> `compare` result) and
    whether it meets the target."""
    checks = []
    for key, (op, bound) in TARGETS.items():
        worst_fn = min if op == ">=" else max
        worst = worst_fn(results, key=lambda v: results[v][key])
        value = results[worst][key]
        met = {"<=": value <= bound, ">=": value >= bound, "==": value == bound}[op]
        checks.append(
            {"key": key, "op": op, "bound": bound, "worst": worst, "value": value, "met": met}
        )
    return checks


def leak_problems(data: dict) -> list[str]:
    """Why the memory measurement cannot be trusted: a baseline that must leak (a release
    before the fix, unpatched, with every result kept) shows no live agent, or fewer retained
    bytes than its live agents' payloads."""
    problems = []
    payload = data["method"]["payload_bytes"]
    for entry in (*data["versions"].values(), *data["upstream"].values()):
        if not entry["leaks"]:
            continue
        live = entry["baseline_live_agents_after_release"]
        retained = entry["baseline_retained_bytes_after_release"]
        env = "-".join(entry["baseline"])
        if live <= 0:
            problems.append(f"{env}: no live agent after release; the leak must show there")
        elif retained < live * payload:
            problems.append(f"{env}: {live} live agents but only {retained} bytes retained")
    return list(dict.fromkeys(problems))  # upstream's pairs share one baseline


def results_data(results: dict[str, dict], pair_defs: dict[str, dict]) -> dict:
    """Pair id -> `compare` result as the page's data: our series by release (`versions`, with
    the targets judged over them) and upstream's releases (`upstream`), each with its pair."""
    entries = {key: {**pair_defs[key], **r} for key, r in results.items()}
    ours = {key: e for key, e in entries.items() if "upstream" not in e}
    upstream = {e["upstream"]: e for e in entries.values() if "upstream" in e}
    return {
        "versions": ours,
        "upstream": upstream,
        "targets": check_targets(ours) if ours else [],
    }


# --- measuring --------------------------------------------------------------------------------


def env_name(version: str, variant: str) -> str:
    return f"bench-{version}-{variant}"


def prepare(envs: list[tuple[str, str]], rebuild: bool, log: Callable[[str], None]) -> dict:
    """The environments `bench-<version>-<variant>`, built or reused by kit.envs.environment
    (`rebuild`: deleted first), each warmed up by one import of the SDK (`probe.py warmup`) so
    that both sides of a pair run with their bytecode compiled: `pythons`, (version, variant) ->
    its interpreter, and how many were `built`."""
    pythons, built = {}, 0
    for version, variant in envs:
        name = env_name(version, variant)
        if rebuild:
            shutil.rmtree(ENVS / name, ignore_errors=True)
        env = environment(name, CI_PYTHON, version, variant)
        built += not env["reused"]
        series = ", ".join(env["series"]) or "none"
        log(f"{name}: {'reused' if env['reused'] else 'built'}; series applied: {series}")
        found = probe_in(env["python"], "warmup")["sdk"]
        if found.split("+")[0] != version:
            raise MatrixError(f"{ENVS / name} has openai-agents {found}, not {version}")
        pythons[(version, variant)] = env["python"]
    return {"pythons": pythons, "built": built}


# What would keep the warm-up from writing bytecode (or put it where the other side's is not).
NO_BYTECODE = ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")


def probe_in(python: str, group: str) -> dict:
    """One fresh process of `probe.py <group>` in an environment: its JSON object. Bytecode is
    written whatever the caller's environment says, so that the warm-up compiles it."""
    env = {key: value for key, value in os.environ.items() if key not in NO_BYTECODE}
    if group == "memory":
        env["PYTHONMALLOC"] = "malloc"
    proc = subprocess.run([python, probe.__file__, group], capture_output=True, text=True, env=env)
    if proc.returncode:
        raise MatrixError(f"`{python} bench/probe.py {group}` failed:\n{proc.stderr.strip()}")
    return json.loads(proc.stdout)


def run_rounds(pythons: dict, pair_defs: dict, chosen: list[str], rounds: int, log) -> dict:
    """Measure the chosen pairs (`pythons`: (version, variant) -> interpreter) and compare them:
    pair id -> `compare` result. Round 1 also counts memory, once per environment."""
    samples = {key: {side: [] for side in SIDES} for key in chosen}
    memory: dict[tuple, dict] = {}
    for n in range(rounds):
        order = SIDES if n % 2 == 0 else SIDES[::-1]
        for key in chosen:
            envs = {side: tuple(pair_defs[key][side]) for side in SIDES}
            measured = {side: {} for side in SIDES}
            for side in order:
                measured[side].update(probe_in(pythons[envs[side]], "timing"))
            if n == 0:
                for side in order:
                    if envs[side] not in memory:
                        memory[envs[side]] = probe_in(pythons[envs[side]], "memory")
                    measured[side].update(memory[envs[side]])
            for side in SIDES:
                samples[key][side].append(measured[side])
        log(f"round {n + 1}/{rounds} done")
    return {key: compare(samples[key]["baseline"], samples[key]["candidate"]) for key in chosen}


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def method(rounds: int) -> dict:
    """The parameters of the measurement, for the page."""
    return {
        "python": CI_PYTHON,
        "rounds": rounds,
        "repeat": probe.REPEAT,
        "min_time_ms": round(probe.MIN_TIME * 1000),
        "run_repeat": probe.RUN_REPEAT,
        "min_run_time_ms": round(probe.MIN_RUN_TIME * 1000),
        "unroll": probe.UNROLL,
        "memory_runs": probe.MEMORY_RUNS,
        "payload_bytes": probe.PAYLOAD,
    }


def run(chosen: list[str] | None, rounds: int, rebuild: bool, log: Callable[[str], None]) -> dict:
    """Build or reuse the environments of the chosen pairs (None: every pair), measure them in
    `rounds` rounds, and return what docs/data/bench.json keeps (JSON as it will be read)."""
    if rounds < 1:
        raise MatrixError("--rounds must be at least 1")
    patched = patched_versions()
    fix = UPSTREAM_FIX.version
    pair_defs = pairs(patched, fix, LAST_BEFORE_FIX, patched[-1])
    chosen = list(dict.fromkeys(chosen)) if chosen else list(pair_defs)
    unknown = [key for key in chosen if key not in pair_defs]
    if unknown:
        raise MatrixError(f"no pair {', '.join(unknown)}; known pairs: {', '.join(pair_defs)}")

    started, load_before = time.monotonic(), os.getloadavg()[0]
    envs = dict.fromkeys(tuple(pair_defs[k][side]) for k in chosen for side in SIDES)
    prepared = prepare(list(envs), rebuild, log)
    prepared_at, cpu_before = time.monotonic(), os.times()
    results = run_rounds(prepared["pythons"], pair_defs, chosen, rounds, log)
    cpu_after = os.times()
    python = next(iter(results.values()))["rounds"]["baseline"][0]["python"]
    data = {
        "date": datetime.date.today().isoformat(),
        "fix": fix,
        "before_fix": LAST_BEFORE_FIX,
        "method": method(rounds),
        "machine": {
            "python": python,
            "cpu": cpu_model(),
            "cores": os.cpu_count(),
            "load_before": round(load_before, 2),
            "load_after": round(os.getloadavg()[0], 2),
            "rounds": rounds,
            "wall_min": round((time.monotonic() - started) / 60, 1),
            "env_min": round((prepared_at - started) / 60, 1),
            "envs": len(envs),
            "envs_built": prepared["built"],
            "cpu_min": round((sum(cpu_after[2:4]) - sum(cpu_before[2:4])) / 60, 1),
        },
        **results_data(results, pair_defs),
    }
    return json.loads(json.dumps(data))


def render(data: dict) -> str:
    """docs/bench.md, every figure on it from `data` (bench/page.py)."""
    from . import page  # it reads this module's metrics and targets

    return page.render(data)
