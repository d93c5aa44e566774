"""docs/bench.md, rendered from the data `driver.run` returns (docs/data/bench.json): the method,
the machine, the table, upstream beside ours and the targets. Every figure on the page comes
from the data; the prose carries none."""

from __future__ import annotations

from . import driver

COLUMNS = {  # metric -> header, unit, digits
    "field_read_ns": ("field read", " ns", 1),
    "agent_read_ns": ("`.agent` read", " ns", 1),
    "source_agent_read_ns": ("`.source_agent` read", " ns", 1),
    "construct_ns": ("construction", " ns", 1),
    "guardrail_agent_read_ns": ("guardrail result `.agent` read", " ns", 1),
    "run1_per_s": ("1-turn runs/s", "", 0),
    "run3_per_s": ("3-turn runs/s", "", 0),
}
TARGET_NAMES = {
    "field_read_ratio": "Field read",
    "construct_ratio": "Construction",
    "guardrail_agent_read_ratio": "An unreleased guardrail result's `.agent` read",
    "run_throughput_ratio": "`Runner.run` throughput, the worse of one and three turns",
    "live_agents_after_release": "Live agents after release",
}
OPS = {"<=": "≤", ">=": "≥", "==": "="}


def _rounds(n: int) -> str:
    return f"{n} round" if n == 1 else f"{n} rounds"


def _range(values: list[float]) -> str:
    return f"{min(values):.2f}–{max(values):.2f}"


def _cell(entry: dict, metric: str) -> str:
    _, unit, digits = COLUMNS[metric]
    if metric not in entry["medians"]["baseline"]:
        return "not measured"  # a round recorded before the metric existed
    base, new = (entry["medians"][side][metric] for side in driver.SIDES)
    key = driver.RATIOS[metric]
    spread = _range(entry["round_ratios"][key])
    return f"{base:.{digits}f} → {new:.{digits}f}{unit} ({entry[key]:.2f}×; {spread})"


def table(entries: list[dict]) -> list[str]:
    """One row per pair. A cell: baseline median → candidate median (median per-round ratio;
    lowest–highest per-round ratio)."""
    head = ["comparison", *(h for h, _, _ in COLUMNS.values()), "live agents", "retained"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for entry in entries:
        b, n = (entry["medians"][side] for side in driver.SIDES)
        cells = [entry["label"], *(_cell(entry, m) for m in COLUMNS)]
        cells.append(f"{b['live_agents_after_release']:.0f} → {n['live_agents_after_release']:.0f}")
        mb_base, mb_new = (x["retained_bytes_after_release"] / 1e6 for x in (b, n))
        cells.append(f"{mb_base:.1f} → {mb_new:.1f} MB")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def machine_line(data: dict) -> str:
    m = data["machine"]
    return (
        f"CPython {m['python']} on {m['cpu']}, {m['cores']} cores (load average "
        f"{m['load_before']:.1f} before, {m['load_after']:.1f} after); {_rounds(m['rounds'])}; "
        f"{m['wall_min']:.1f} min wall, {m['env_min']:.1f} min of it preparing the {m['envs']} "
        f"environments ({m['envs_built']} built, {m['envs'] - m['envs_built']} reused, "
        f"warm-up included); {m['cpu_min']:.1f} min CPU of the measuring processes; {data['date']}."
    )


def method(data: dict) -> list[str]:
    p, fix, before = data["method"], data["fix"], data["before_fix"]
    return [
        f"On CPython {p['python']}, each patched release against itself unpatched, and "
        f"upstream's own implementation against {before}, the last release before the fix, both "
        f"unpatched: {fix} (upstream's fix) and upstream's newest release that we have a series "
        "for. Per side:",
        "",
        "- reads of a run item made before the timing: a plain field (`raw_item`), `.agent`, "
        "a handoff's `.source_agent`, and the construction of a `MessageOutputItem`, in "
        "nanoseconds each, and `.agent` of an output guardrail's result, never released (the "
        "series release those too, so an unreleased read must not pay for it);",
        "- `Runner.run` throughput on the scripted fake model of `compat_tests/support.py`: "
        "runs per second of one turn (an answer) and of three turns (two tool calls), each on a "
        "fresh agent made outside the timing;",
        f"- memory: after {p['memory_runs']:,} runs whose results the caller keeps and then "
        "releases (`release_agents()` where the release has it), the agents still alive and the "
        f"heap bytes still held; each agent holds {p['payload_bytes']:,} bytes in its tool, so "
        "a leaked agent cannot hide.",
        "",
        "How:",
        "",
        "- One environment per release and variant, installed as a compat cell's is and reused "
        "while unchanged. Before the first round each runs one warm-up import of the SDK (and "
        "each fake agent once), so that both sides of a pair run with their bytecode compiled.",
        f"- {_rounds(p['rounds'])}; a round runs every pair, each side in a fresh process, the two "
        "sides back to back in alternating order. A figure is the median over the rounds, a "
        "ratio the median of the per-round ratios: the two sides of a round are seconds apart, "
        "so a slow phase of the machine hits both or neither. The default number of rounds is "
        "the fewest whose median ignores two bad rounds; more rounds of a few pairs settle a "
        "figure that it leaves in doubt.",
        f"- In a process, each metric is the best of {p['repeat']} passes of at least "
        f"{p['min_time_ms']} ms (reads and construction, the statement written {p['unroll']} "
        f"times per loop) or of {p['run_repeat']} passes of at least {p['min_run_time_ms']} ms "
        "(`Runner.run`), the metrics interleaved.",
        "- Times are the process's CPU time, so a neighbour on the core does not count. A shared "
        "virtual machine also has phases, seconds long, in which everything runs slower, CPU "
        "time included: every process times a fixed statement of plain Python in the same "
        "passes, and each process's figures are scaled to the fastest reference of its pair "
        "before anything is compared.",
        "- Memory is counted once per environment, in the first round, in a process of its own "
        "run with `PYTHONMALLOC=malloc`, from glibc's `mallinfo2()` (every Python allocation, at "
        "full speed); with tracemalloc where that is missing.",
        f"- Ratios are candidate / baseline: patched / unpatched, or upstream / {before} for "
        "upstream's rows; of times (above one: slower) and of runs per second (below one: "
        "slower). The session fails if an unpatched release before the fix shows no live agent "
        "after release, or fewer retained bytes than its agents' payloads: then the measurement "
        "is broken, not the SDK fixed.",
    ]


def beside(data: dict) -> list[str]:
    """Our series on the last release before the fix beside upstream's releases, all as
    ratios against that release unpatched."""
    if not data["upstream"]:
        return []
    before = data["before_fix"]
    columns = {f"upstream {v}": e for v, e in data["upstream"].items()}
    if before in data["versions"]:
        columns = {f"our series on {before}": data["versions"][before], **columns}
    lines = [
        "## Upstream beside ours",
        "",
        f"Every column against the same unpatched {before}: median of the per-round ratios "
        "(lowest–highest).",
        "",
        "| | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for metric, (header, _, _) in COLUMNS.items():
        key = driver.RATIOS[metric]
        cells = [
            f"{e[key]:.2f}× ({_range(e['round_ratios'][key])})" if key in e else "not measured"
            for e in columns.values()
        ]
        lines.append(f"| {header} | " + " | ".join(cells) + " |")
    live = [f"{e['live_agents_after_release']:.0f}" for e in columns.values()]
    mb = [f"{e['retained_bytes_after_release'] / 1e6:.1f} MB" for e in columns.values()]
    lines += ["| live agents after release | " + " | ".join(live) + " |"]
    lines += ["| retained after release | " + " | ".join(mb) + " |", ""]
    if any(v != data["fix"] for v in data["upstream"]):
        lines += [
            f"Upstream's newest release differs from {before} in much more than the fix: its "
            "throughput column measures all of that, not the fix alone.",
            "",
        ]
    return lines


def _worst_spread(entry: dict, key: str, value: float) -> str:
    """The per-round range of the worst release's ratio (for run throughput: of the one-turn
    or three-turn ratio that is the worse)."""
    options = [key]
    if key == "run_throughput_ratio":
        options = ["run1_throughput_ratio", "run3_throughput_ratio"]
    for option in options:
        if option in entry["round_ratios"] and entry[option] == value:
            return f"; per round {_range(entry['round_ratios'][option])}"
    return ""


def targets(data: dict) -> list[str]:
    lines = ["## Targets", ""]
    if not data["targets"]:
        return [*lines, "No patched release was measured: no target judged.", ""]
    lines += ["For the worst patched release measured:", ""]
    for t in data["targets"]:
        ratio = t["key"].endswith("_ratio")
        bound = f"{t['bound']:.2f}" if ratio else f"{t['bound']:g}"
        value = f"{t['value']:.3f}×" if ratio else f"{t['value']:g}"
        spread = _worst_spread(data["versions"][t["worst"]], t["key"], t["value"])
        verdict = "met" if t["met"] else "missed"
        lines.append(
            f"- {TARGET_NAMES.get(t['key'], t['key'])}, `{t['key']} {OPS[t['op']]} {bound}`: "
            f"**{verdict}**; worst {value} ({t['worst']}{spread})."
        )
    return [*lines, ""]


def descriptor_note(data: dict) -> list[str]:
    """What the pre-fix series cost on reads and construction, from this run's ratios."""
    pre = [e for e in data["versions"].values() if e["leaks"]]
    if not pre:
        return []

    def spread(key: str) -> str:
        return _range([e[key] for e in pre]) + "×"

    return [
        "## Not a target: the `.agent` read before the fix",
        "",
        f"The series for releases before {data['fix']} make `agent` (`source_agent`, "
        "`target_agent` on handoffs) a class-level non-data descriptor. On CPython "
        f"{data['method']['python']} that stops the interpreter's attribute specialisation for "
        "those names: `dis.dis(..., adaptive=True)` shows `item.agent` left as "
        "`LOAD_ATTR_ADAPTIVE` patched (`LOAD_ATTR_INSTANCE_VALUE` unpatched), and the dataclass "
        "`__init__`'s `self.agent = agent` as `STORE_ATTR_ADAPTIVE`. In this run, on those "
        f"releases: `.agent` reads {spread('agent_read_ratio')}, `.source_agent` reads "
        f"{spread('source_agent_read_ratio')}, other fields {spread('field_read_ratio')}, "
        f"construction {spread('construct_ratio')}, `Runner.run` throughput "
        f"{spread('run_throughput_ratio')} (medians of the per-round ratios).",
        "",
    ]


def memory_check(data: dict) -> list[str]:
    if not any(e["leaks"] for e in (*data["versions"].values(), *data["upstream"].values())):
        text = "No unpatched release before the fix was measured: the memory count was not "
        return [text + "checked against a known leak.", ""]
    problems = driver.leak_problems(data)
    if problems:
        return ["**The memory measurement is broken:**", "", *(f"- {p}" for p in problems), ""]
    return [
        f"Memory check: every unpatched release before {data['fix']} measured here keeps its "
        "agents alive after release, with at least their payloads' bytes: the count sees the "
        "leak.",
        "",
    ]


INTRO = (
    "Written by `nox -s bench -- --publish` from docs/data/bench.json, which also keeps every "
    "round's figures as measured; `nox -s bench -- --check` checks this page against it. "
    "`nox -s bench` alone measures and prints the page; `-- --versions <id>,<id>` measures some "
    "pairs (a patched release, upstream's fix by its release, `upstream-<release>` for upstream's "
    "newest), `--rounds <n>` sets the rounds, and `--rebuild` rebuilds the environments."
)


def render(data: dict) -> str:
    """docs/bench.md."""
    entries = [*data["versions"].values(), *data["upstream"].values()]
    lines = [
        "# What the agent-release fix costs",
        "",
        INTRO,
        "",
        "## What is measured, and how",
        "",
        *method(data),
        "",
        "## Results",
        "",
        f"> {machine_line(data)}",
        "",
        "A cell: baseline median → candidate median (median of the per-round ratios; "
        f"lowest–highest per-round ratio). Upstream's rows compare {data['before_fix']} "
        "unpatched → upstream's release.",
        "",
        *table(entries),
        "",
        *memory_check(data),
        *beside(data),
        *targets(data),
        *descriptor_note(data),
    ]
    return "\n".join(lines).rstrip("\n") + "\n"
