"""What the agent-release fix costs, measured inside one SDK environment.

`python bench/bench_agent_release.py reads|runs|memory` measures one group of metrics of the
installed `openai-agents` and prints one JSON object. `nox -s bench` runs every group in fresh
processes, round after round, the two environments of a pair (unpatched and patched) back to back
in alternating order, and compares them with the helpers at the top of this file, which are
stdlib only so the noxfile and the tests import them without an SDK.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
import timeit
import tracemalloc
import weakref
from pathlib import Path

COMPAT_TESTS = Path(__file__).resolve().parents[1] / "compat_tests"
# Times are the process's CPU time, not wall time: the machines are shared, and a neighbour
# taking the core must not count as a cost of the fix.
MIN_TIME = 0.05  # seconds: the shortest timed measurement of a micro-benchmark
MIN_RUN_TIME = 0.2  # seconds: the shortest timed batch of `Runner.run` calls
REPEAT = 10  # measurements per metric and process; the best one counts
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


# --- comparing (stdlib only) ------------------------------------------------------------------


def medians(samples: list[dict]) -> dict[str, float]:
    """The median of every numeric metric over the rounds of one environment."""
    return {
        key: statistics.median(s[key] for s in samples)
        for key in samples[0]
        if not isinstance(samples[0][key], str)
    }


def ratio(new: float, base: float) -> float:
    return round(new / base, 3)


def compare(base_samples: list[dict], new_samples: list[dict]) -> dict:
    """Per metric, the median and the range of the per-round ratios new/base (a round measures
    both sides back to back, so the pairing cancels slow phases of the shared machine), and the
    memory left after release; `run_throughput_ratio` is the geometric mean of the 1-turn and
    3-turn ratios."""
    base, new = medians(base_samples), medians(new_samples)
    per_round = {
        key: [ratio(n[m], b[m]) for b, n in zip(base_samples, new_samples)]
        for m, key in RATIOS.items()
    }
    out = {key: round(statistics.median(r), 3) for key, r in per_round.items()}
    out["run_throughput_ratio"] = round(
        math.sqrt(out["run1_throughput_ratio"] * out["run3_throughput_ratio"]), 3
    )
    out.update({key: new[key] for key in MEMORY})
    out.update({f"baseline_{key}": base[key] for key in MEMORY})
    out["round_ratio_range"] = {key: [min(r), max(r)] for key, r in per_round.items()}
    out["medians"] = {"baseline": base, "candidate": new}
    out["rounds"] = {"baseline": base_samples, "candidate": new_samples}
    return out


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


# --- measuring (inside an SDK environment) ----------------------------------------------------


def best_per_loop(runs: dict, min_time: float) -> dict[str, float]:
    """Seconds per loop of each `run(loops)` (which returns seconds): its loops double until one
    run takes `min_time`; then REPEAT passes over all of them, interleaved so that each metric
    sees the same phases of the shared machine, and the best pass of each counts."""
    loops = {}
    for name, run in runs.items():
        loops[name] = 1
        while run(loops[name]) < min_time:
            loops[name] *= 2
    best = dict.fromkeys(runs, math.inf)
    for _ in range(REPEAT):
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


def memory_after_release(loop) -> tuple[int, int]:
    """Live agents and traced bytes still held after MEMORY_RUNS runs whose results the
    caller keeps and releases (`release_agents()`, where the release has it)."""
    from agents import Runner

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
        return results, sum(ref() is not None for ref in refs), tracemalloc.get_traced_memory()[0]

    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    results, live, after = loop.run_until_complete(keep_and_release())
    tracemalloc.stop()
    del results
    return live, after - before


def reads() -> dict:
    import support
    from agents.items import HandoffOutputItem, MessageOutputItem

    source, target = support.handoff_agents()
    raw = support.message("Paris")
    handoff_raw = {"type": "function_call_output", "call_id": "call_1", "output": "{}"}
    namespace = {
        "MessageOutputItem": MessageOutputItem,
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
        },
        MIN_TIME,
    )
    return {name: t / UNROLL * 1e9 for name, t in best.items()}


def runs() -> dict:
    import support

    loop = asyncio.new_event_loop()
    best = best_per_loop(
        {
            "run1_per_s": run_timer(loop, support.answering_agent),
            "run3_per_s": run_timer(loop, support.tool_agent),
        },
        MIN_RUN_TIME,
    )
    return {name: 1 / t for name, t in best.items()}


def memory() -> dict:
    import support
    from agents import Runner

    loop = asyncio.new_event_loop()
    for agent in (support.answering_agent(), support.tool_agent()):  # warm the SDK's caches
        loop.run_until_complete(Runner.run(agent, "hi"))
    live, retained = memory_after_release(loop)
    return {"live_agents_after_release": live, "retained_bytes_after_release": retained}


# One fresh process per group and side, the two sides of a pair back to back: seconds apart,
# so a neighbour's burst on the shared machine hits both or neither.
GROUPS = {"reads": reads, "runs": runs, "memory": memory}


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
