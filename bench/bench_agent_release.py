"""What the agent-release fix costs, measured inside one SDK environment.

`python bench/bench_agent_release.py timing|memory` (or `reads`, `runs`) measures one group of
metrics of the installed `openai-agents` and prints one JSON object. `nox -s bench` compares
pairs of environments (each patched release against itself unpatched; upstream's own fix, 0.6.0,
and upstream's newest release against 0.5.1, all unpatched) with the helpers at the top of this
file, which are stdlib only so the noxfile and the tests import them without an SDK.

How it is timed, and why so (the default run must finish in 30 minutes on 2 shared cores, for
27 pairs, 54 sides, 51 environments):

- ROUNDS (5) rounds; a round runs, per pair, one fresh `timing` process per side, the two sides
  back to back, in alternating order. Each metric's figure is the median over rounds, each ratio
  the median of the per-round ratios (the two sides of a round are seconds apart, so a slow
  phase of the shared machine hits both or neither). Five is the fewest rounds whose median
  ignores two bad rounds; importing the SDK (about 2 s of CPU) is most of each process, so more
  rounds cost more than longer measurements would.
- Inside a process each metric takes the best of REPEAT passes, interleaved with the other
  metrics: 5 passes of at least 20 ms for the reads and the construction (timeit, a statement
  written UNROLL times), 5 passes of at least 50 ms of `Runner.run` calls, on agents made
  outside the timing.
- Times are the process's CPU time, not wall time: a neighbour taking the core must not count
  as a cost of the fix. That is not enough on a shared virtual machine: it has phases, seconds
  long, in which everything, CPU time included, runs about 1.6 times slower (seen on an idle
  guest, pinned to one CPU too). So every process also times a fixed statement of plain Python
  (REFERENCE) in the same passes as the metrics, and `at_common_speed` scales each process to
  the fastest reference of its pair before anything is compared; without it, per-round ratios
  of the same code ranged from 0.5 to 2.
- Memory is counted once per environment (round 1), in its own process: live agents are a
  count, and retained bytes vary by a few kilobytes from process to process. The process runs
  with PYTHONMALLOC=malloc and reads glibc's mallinfo2(), so every Python allocation is counted
  at full speed; elsewhere tracemalloc (five times slower) does it.

Budget: about 4.5 s of wall time per timing process (2 s of it importing the SDK) and 4 s per
memory process, so 5 x 54 x 4.5 + 54 x 4 s, about 24 min, plus the start of each process: the
full run took 27 min on an idle 2-core machine (README.md), with its 51 environments already
built; they are reused while release, variant and series are unchanged, and building them took
another 13 min (under a load of 4), so a first run does not fit in 30 min. Five rounds is the
fewest whose median ignores two bad rounds; nine rounds of a few pairs (`--versions ...
--rounds 9`) settle a figure that five leave in doubt.
"""

from __future__ import annotations

import asyncio
import ctypes
import dataclasses
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import timeit
import tracemalloc
import weakref
from pathlib import Path

COMPAT_TESTS = Path(__file__).resolve().parents[1] / "compat_tests"
ROUNDS = 5
MIN_TIME = 0.02  # seconds: the shortest timed pass of a micro-benchmark
REPEAT = 5  # passes per micro-benchmark and process; the best one counts
MIN_RUN_TIME = 0.05  # seconds: the shortest timed pass of `Runner.run` calls
RUN_REPEAT = 5  # passes per `Runner.run` metric and process; the best one counts
UNROLL = 20  # statements per loop iteration, so the loop's own cost stays out of the reads
MEMORY_RUNS = 1000
PAYLOAD = 100_000  # bytes held by each agent's tool closure: a leaked agent cannot hide

# metric -> the key of its ratio (new / base): times in ns per call, throughputs in runs per s
TIMES = {
    "field_read_ns": "field_read_ratio",
    "agent_read_ns": "agent_read_ratio",
    "source_agent_read_ns": "source_agent_read_ratio",
    "construct_ns": "construct_ratio",
}
RATES = {"run1_per_s": "run1_throughput_ratio", "run3_per_s": "run3_throughput_ratio"}
RATIOS = {**TIMES, **RATES}
MEMORY = ("live_agents_after_release", "retained_bytes_after_release")

# The targets, for the worst patched release: key -> (comparison, bound)
TARGETS = {
    "field_read_ratio": ("<=", 1.05),
    "construct_ratio": ("<=", 1.10),
    "run_throughput_ratio": (">=", 0.99),
    "live_agents_after_release": ("==", 0),
}


# --- comparing (stdlib only) ------------------------------------------------------------------


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def pairs(patched: list[str], fix: str, before_fix: str, newest: str) -> dict[str, dict]:
    """What `nox -s bench` compares: pair id -> label, baseline and candidate environment
    (version, variant), and whether the baseline must show the leak. Each patched release
    against itself unpatched; upstream's fix (id `fix`) and upstream's newest release (id
    `upstream-<newest>`) against the last release before the fix, all unpatched."""
    out = {
        v: {
            "label": f"{v} patched vs unpatched",
            "baseline": (v, "unpatched"),
            "candidate": (v, "patched"),
            "leaks": version_key(v) < version_key(fix),
        }
        for v in patched
    }
    for key, v in ((fix, fix), (f"upstream-{newest}", newest)):
        out[key] = {
            "label": f"upstream {v} vs {before_fix} (both unpatched)",
            "baseline": (before_fix, "unpatched"),
            "candidate": (v, "unpatched"),
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
    process's times are scaled by the lowest reference / its reference (REFERENCE, timed in the
    same passes), its rates by the inverse. Samples without a reference are left as they are."""
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
    """Per metric, the median and the range of the per-round ratios new/base (a round measures
    both sides back to back, so the pairing cancels slow phases of the shared machine), after
    `at_common_speed`, and the memory left after release; `run_throughput_ratio` is the worse of
    the 1-turn and 3-turn ratios. `rounds` keeps the samples as measured."""
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
    out["round_ratio_range"] = {key: [min(r), max(r)] for key, r in per_round.items()}
    out["medians"] = {"baseline": base, "candidate": new}
    out["rounds"] = raw
    return out


def leak_problems(results: dict[str, dict], pair_defs: dict[str, dict]) -> list[str]:
    """Why the memory measurement cannot be trusted: a baseline that must leak (a release
    before the fix, unpatched, with every result kept) shows no live agent, or fewer retained
    bytes than its live agents' payloads."""
    problems = []
    for key, r in results.items():
        if not pair_defs[key]["leaks"]:
            continue
        live = r["baseline_live_agents_after_release"]
        retained = r["baseline_retained_bytes_after_release"]
        env = "-".join(pair_defs[key]["baseline"])
        if live <= 0:
            problems.append(f"{env}: no live agent after release; the leak must show there")
        elif retained < live * PAYLOAD:
            problems.append(f"{env}: {live} live agents but only {retained} bytes retained")
    return problems


def check_targets(results: dict[str, dict]) -> list[dict]:
    """Per target, the worst patched release (`results`: version -> `compare` result)."""
    checks = []
    for key, (op, bound) in TARGETS.items():
        worst_fn = min if op == ">=" else max
        worst = worst_fn(results, key=lambda v: results[v][key])
        value = results[worst][key]
        met = {"<=": value <= bound, ">=": value >= bound, "==": value == bound}[op]
        checks.append({"target": f"{key} {op} {bound}", "worst": worst, "value": value, "met": met})
    return checks


def _cell(c: dict, metric: str, unit: str = "", ndigits: int = 1) -> str:
    base, new = c["medians"]["baseline"][metric], c["medians"]["candidate"][metric]
    lo, hi = c["round_ratio_range"][RATIOS[metric]]
    r = c[RATIOS[metric]]
    return f"{base:.{ndigits}f} → {new:.{ndigits}f}{unit} ({r:.2f}×; {lo:.2f}–{hi:.2f})"


def format_table(rows: dict[str, dict]) -> str:
    """A Markdown table, one row per comparison (label -> `compare` result). A cell: baseline
    median → candidate median (median per-round ratio; lowest–highest per-round ratio)."""
    head = (
        "| comparison | field read | `.agent` read | `.source_agent` read | construction "
        "| 1-turn runs/s | 3-turn runs/s | live agents | retained |"
    )
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for label, c in rows.items():
        b, n = c["medians"]["baseline"], c["medians"]["candidate"]
        cells = [_cell(c, m, " ns") for m in TIMES] + [_cell(c, m, ndigits=0) for m in RATES]
        cells.append(f"{b['live_agents_after_release']:.0f} → {n['live_agents_after_release']:.0f}")
        mb_base, mb_new = (x["retained_bytes_after_release"] / 1e6 for x in (b, n))
        cells.append(f"{mb_base:.1f} → {mb_new:.1f} MB")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --- running the pairs (from `nox -s bench`, stdlib only) -------------------------------------


class BenchError(Exception):
    """A measuring process failed; the message has its stderr."""


def _measure_in(python: str, group: str) -> dict:
    extra = {"PYTHONMALLOC": "malloc"} if group == "memory" else {}
    proc = subprocess.run(
        [python, __file__, group], capture_output=True, text=True, env={**os.environ, **extra}
    )
    if proc.returncode:
        raise BenchError(f"{python} {group}: {proc.stderr}")
    return json.loads(proc.stdout)


def run_rounds(pythons: dict, pair_defs: dict, chosen: list[str], rounds: int, log) -> dict:
    """Measure the chosen pairs (`pythons`: environment -> interpreter) and compare them:
    pair id -> `compare` result. Round 1 also counts memory."""
    sides = ("baseline", "candidate")
    samples = {key: {side: [] for side in sides} for key in chosen}
    for n in range(rounds):
        order = sides if n % 2 == 0 else sides[::-1]
        for key in chosen:
            measured = {side: {} for side in sides}
            for group in ("timing", "memory") if n == 0 else ("timing",):
                for side in order:
                    measured[side].update(_measure_in(pythons[pair_defs[key][side]], group))
            for side in sides:
                samples[key][side].append(measured[side])
        log(f"round {n + 1}/{rounds} done")
    return {key: compare(samples[key]["baseline"], samples[key]["candidate"]) for key in chosen}


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def summary(results: dict, pair_defs: dict, before_fix: str, machine: str) -> tuple[str, dict]:
    """The printed table with the target verdicts, and what `--json` writes."""
    ours = {key: r for key, r in results.items() if "upstream" not in pair_defs[key]}
    checks = check_targets(ours) if ours else []
    lines = [machine, format_table({pair_defs[key]["label"]: r for key, r in results.items()})]
    for check in checks:
        verdict = "met" if check["met"] else "MISSED"
        lines.append(f"{check['target']}: worst {check['value']} ({check['worst']}), {verdict}")
    upstream = {
        pair_defs[key]["upstream"]: {"baseline": before_fix, **r}
        for key, r in results.items()
        if "upstream" in pair_defs[key]
    }
    out = {"versions": ours, "upstream": upstream, "targets": checks, "machine": machine}
    return "\n".join(lines), out


# --- measuring (inside an SDK environment) ----------------------------------------------------


def best_per_loop(runs: dict, min_time: float, repeat: int) -> dict[str, float]:
    """Seconds per loop of each `run(loops)` (which returns seconds): its loops grow until one
    run takes `min_time` (and not much more); then `repeat` passes over all of them,
    interleaved so that each metric sees the same phases of the shared machine, and the best
    pass of each counts."""
    loops = {}
    for name, run in runs.items():
        loops[name] = 1
        while (took := run(loops[name])) < min_time:
            grow = min_time * 1.05 / took if took > min_time / 10 else 10
            loops[name] = max(loops[name] + 1, math.ceil(loops[name] * grow))
    best = dict.fromkeys(runs, math.inf)
    for _ in range(repeat):
        for name, run in runs.items():
            best[name] = min(best[name], run(loops[name]) / loops[name])
    return best


def timer(stmt: str, namespace: dict):
    """`timeit` of `stmt` written UNROLL times; the names of `namespace` are bound as locals of
    the timed function."""
    setup = "; ".join(f"{name} = ns[{name!r}]" for name in namespace)
    stmts = "; ".join([stmt] * UNROLL)
    return timeit.Timer(stmts, setup, time.process_time, globals={"ns": namespace}).timeit


def run_timer(loop, make_agent):
    """Seconds for `n` `Runner.run` calls, each on a fresh agent made outside the timing."""
    from agents import Runner

    async def run_all(agents):
        for agent in agents:
            await Runner.run(agent, "hi")

    def timed(n: int) -> float:
        agents = [make_agent() for _ in range(n)]
        start = time.process_time()
        loop.run_until_complete(run_all(agents))
        return time.process_time() - start

    return timed


def payload_agent(i: int):
    """Every other agent answers on turn 1, the rest call a tool twice; each holds PAYLOAD
    bytes in its own tool's closure."""
    import support

    payload = bytes(PAYLOAD)

    async def invoke(ctx, arguments: str) -> str:
        return "Paris" if payload else ""

    agent = support.tool_agent() if i % 2 else support.answering_agent()
    agent.tools = [dataclasses.replace(support.lookup_city, on_invoke_tool=invoke)]
    return agent


class _Mallinfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def heap_counter():
    """A function returning the bytes in use in the C heap (glibc's mallinfo2(): allocated
    chunks plus mmap-ed blocks), which holds every Python object when the process runs with
    PYTHONMALLOC=malloc; None where either is missing."""
    if os.environ.get("PYTHONMALLOC") != "malloc":
        return None
    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return None
    mallinfo2.restype = _Mallinfo2

    def in_use() -> int:
        info = mallinfo2()
        return info.uordblks + info.hblkhd

    return in_use


def memory_after_release(loop) -> tuple[int, int, str]:
    """Live agents and bytes still held after MEMORY_RUNS runs whose results the caller keeps
    and releases (`release_agents()`, where the release has it), and how bytes were counted."""
    from agents import Runner

    in_use = heap_counter()
    method = "mallinfo2" if in_use else "tracemalloc"
    if in_use is None:
        tracemalloc.start()

        def in_use() -> int:
            return tracemalloc.get_traced_memory()[0]

    async def keep_and_release():
        refs, results = [], []
        for i in range(MEMORY_RUNS):
            agent = payload_agent(i)
            refs.append(weakref.ref(agent))
            results.append(await Runner.run(agent, "hi"))
            del agent
        for result in results:
            if hasattr(result, "release_agents"):
                result.release_agents()
        gc.collect()
        return results, sum(ref() is not None for ref in refs), in_use()

    gc.collect()
    before = in_use()
    results, live, after = loop.run_until_complete(keep_and_release())
    if method == "tracemalloc":
        tracemalloc.stop()
    del results
    return live, after - before, method


@dataclasses.dataclass
class _Reference:
    a: object
    b: object

    def get(self) -> object:
        return self.a


# The machine's speed, timed in the same passes as the metrics: the same statement on both
# sides of a pair (the same interpreter, no SDK code). The shared machines have phases, seconds
# long, in which everything runs about 1.6 times slower, CPU time included.
REFERENCE = "Reference(agent, raw).get()"


def reads() -> dict:
    import support
    from agents.items import HandoffOutputItem, MessageOutputItem

    source, target = support.handoff_agents()
    raw = support.message("Paris")
    handoff_raw = {"type": "function_call_output", "call_id": "call_1", "output": "{}"}
    namespace = {
        "MessageOutputItem": MessageOutputItem,
        "Reference": _Reference,
        "agent": target,
        "raw": raw,
        "item": MessageOutputItem(agent=target, raw_item=raw),
        "handoff": HandoffOutputItem(
            agent=source, raw_item=handoff_raw, source_agent=source, target_agent=target
        ),
    }
    best = best_per_loop(
        {
            "field_read_ns": timer("item.raw_item", namespace),
            "agent_read_ns": timer("item.agent", namespace),
            "source_agent_read_ns": timer("handoff.source_agent", namespace),
            "construct_ns": timer("MessageOutputItem(agent=agent, raw_item=raw)", namespace),
            "ref_ns": timer(REFERENCE, namespace),
        },
        MIN_TIME,
        REPEAT,
    )
    return {name: t / UNROLL * 1e9 for name, t in best.items()}


def runs() -> dict:
    import support

    loop = asyncio.new_event_loop()
    namespace = {"Reference": _Reference, "agent": None, "raw": None}
    best = best_per_loop(
        {
            "run1_per_s": run_timer(loop, support.answering_agent),
            "run3_per_s": run_timer(loop, support.tool_agent),
            "run_ref_ns": timer(REFERENCE, namespace),
        },
        MIN_RUN_TIME,
        RUN_REPEAT,
    )
    ref = best.pop("run_ref_ns")
    return {**{name: 1 / t for name, t in best.items()}, "run_ref_ns": ref / UNROLL * 1e9}


def timing() -> dict:
    return {**reads(), **runs()}


def memory() -> dict:
    import support
    from agents import Runner

    loop = asyncio.new_event_loop()
    for agent in (support.answering_agent(), support.tool_agent()):  # warm the SDK's caches
        loop.run_until_complete(Runner.run(agent, "hi"))
    live, retained, method = memory_after_release(loop)
    return {
        "live_agents_after_release": live,
        "retained_bytes_after_release": retained,
        "memory_counted_by": method,
    }


# `nox -s bench` runs `timing` (reads, then runs) once per round and side, and `memory` once
# per side, with PYTHONMALLOC=malloc; `reads` and `runs` are there for a quick look by hand.
GROUPS = {"timing": timing, "memory": memory, "reads": reads, "runs": runs}


def measure(group: str) -> dict:
    os.environ.pop("OPENAI_API_KEY", None)
    os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
    sys.path.insert(0, str(COMPAT_TESTS))
    from importlib.metadata import version

    from agents import set_tracing_disabled

    set_tracing_disabled(True)
    out = GROUPS[group]()
    return {"sdk": version("openai-agents"), "python": platform.python_version(), **out}


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1])))
