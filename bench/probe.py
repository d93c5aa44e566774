"""What the agent-release fix costs, measured inside one SDK environment.

`python bench/probe.py timing|memory|warmup` (or `reads`, `runs` for a quick look by hand)
measures one group of metrics of the installed `openai-agents` and prints one JSON object. It
needs the standard library, the SDK and `compat_tests/support.py` (its scripted fake model), no
more: `bench/driver.py` runs it in each environment and imports its parameters; docs/bench.md
says how the figures are made.

Each metric takes the best of its passes, the metrics interleaved so that each sees the same
phases of the shared machine. Times are the process's CPU time, and every pass also times
REFERENCE, a fixed statement of plain Python, so that the driver can scale a process that ran
in a slow phase of the machine to its pair's speed. Memory is counted with glibc's mallinfo2()
when the process runs with PYTHONMALLOC=malloc (every Python allocation, at full speed), with
tracemalloc otherwise.
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
import sys
import time
import timeit
import tracemalloc
import weakref
from pathlib import Path

COMPAT_TESTS = Path(__file__).resolve().parents[1] / "compat_tests"
MIN_TIME = 0.02  # seconds: the shortest timed pass of a micro-benchmark
REPEAT = 5  # passes per micro-benchmark and process; the best one counts
MIN_RUN_TIME = 0.05  # seconds: the shortest timed pass of `Runner.run` calls
RUN_REPEAT = 5  # passes per `Runner.run` metric and process; the best one counts
UNROLL = 20  # statements per loop iteration, so the loop's own cost stays out of the reads
MEMORY_RUNS = 1000  # runs whose results are kept, then released
PAYLOAD = 100_000  # bytes held by each agent's tool closure: a leaked agent cannot hide


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
# sides of a pair (the same interpreter, no SDK code).
REFERENCE = "Reference(agent, raw).get()"


def _guardrail_result(agent):
    """An output guardrail's result as a run leaves it: holding the agent it checked."""
    from agents import GuardrailFunctionOutput, OutputGuardrail, OutputGuardrailResult

    def allow(context, agent, output) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)

    output = GuardrailFunctionOutput(output_info=None, tripwire_triggered=False)
    guardrail = OutputGuardrail(guardrail_function=allow)
    return OutputGuardrailResult(
        guardrail=guardrail, agent_output="Paris", agent=agent, output=output
    )


def reads() -> dict:
    """Nanoseconds per field read, `.agent` read, `.source_agent` read and construction of a
    run item, `.agent` read of an (unreleased) output guardrail result, and per REFERENCE
    (`ref_ns`)."""
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
        "guardrail": _guardrail_result(target),
    }
    best = best_per_loop(
        {
            "field_read_ns": timer("item.raw_item", namespace),
            "agent_read_ns": timer("item.agent", namespace),
            "source_agent_read_ns": timer("handoff.source_agent", namespace),
            "construct_ns": timer("MessageOutputItem(agent=agent, raw_item=raw)", namespace),
            "guardrail_agent_read_ns": timer("guardrail.agent", namespace),
            "ref_ns": timer(REFERENCE, namespace),
        },
        MIN_TIME,
        REPEAT,
    )
    return {name: t / UNROLL * 1e9 for name, t in best.items()}


def runs() -> dict:
    """`Runner.run` calls per second, one-turn and three-turn, and REFERENCE (`run_ref_ns`)
    timed in the same passes."""
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


def _run_each_agent_once(loop) -> None:
    import support
    from agents import Runner

    for agent in (support.answering_agent(), support.tool_agent()):
        loop.run_until_complete(Runner.run(agent, "hi"))


def memory() -> dict:
    loop = asyncio.new_event_loop()
    _run_each_agent_once(loop)  # warm the SDK's caches
    live, retained, method = memory_after_release(loop)
    return {
        "live_agents_after_release": live,
        "retained_bytes_after_release": retained,
        "memory_counted_by": method,
    }


def warmup() -> dict:
    """Import what the other groups import and run each fake agent once, so that the bytecode
    of everything they load is compiled before the first measured process."""
    from agents.items import HandoffOutputItem, MessageOutputItem  # noqa: F401

    _run_each_agent_once(asyncio.new_event_loop())
    return {}


# `nox -s bench` runs `warmup` once per environment, `timing` (reads, then runs) once per round
# and side, and `memory` once per environment, with PYTHONMALLOC=malloc.
GROUPS = {"timing": timing, "memory": memory, "warmup": warmup, "reads": reads, "runs": runs}


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
    if len(sys.argv) != 2 or sys.argv[1] not in GROUPS:
        sys.exit(f"usage: python {sys.argv[0]} {'|'.join(GROUPS)}")
    print(json.dumps(measure(sys.argv[1])))
