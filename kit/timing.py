"""What a slice of the matrix costs: its wall time beside each cell's set-up and test time, as
the cells record them (`build/compat/cell-<key>.json`). Page: docs/matrix-time.md."""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
import time

from . import ROOT, version_key
from .report import COMPAT
from .series import git


def _streams(nox_args: list[str], streams: int) -> list[list[str]]:
    """The slice split by Python into `streams` nox calls (`-p` lists), as even as can be."""
    if streams == 1:
        return [nox_args]
    listing = subprocess.run(
        [sys.executable, "-m", "nox", "--json", "-l", *nox_args],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    counts: dict[str, int] = {}
    for entry in json.loads(listing):
        if entry.get("selected", True) and entry["python"]:  # `-l` lists what `-s` selects
            counts[entry["python"]] = counts.get(entry["python"], 0) + 1
    groups: list[list[str]] = [[] for _ in range(streams)]
    for python in sorted(counts, key=lambda p: -counts[p]):  # largest first, to the lightest
        min(groups, key=lambda g: sum(counts[p] for p in g)).append(python)
    return [[*nox_args, "-p", *group] for group in groups if group]


def probe() -> float:
    """Seconds for a fixed pure-Python loop, best of three: how fast the machine is right now.
    A shared host's speed drifts by up to 2x within minutes, so each run records it before
    and after, and only runs at similar probe times compare."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        sum(i * i for i in range(5_000_000))
        best = min(best, time.perf_counter() - started)
    return round(best, 2)


def _commit() -> str:
    """HEAD, with "+changes" if anything outside docs/ (which the sessions write) is edited."""
    try:
        head = git(ROOT, "rev-parse", "--short", "HEAD").strip()
        dirty = git(ROOT, "status", "--porcelain", "--", ".", ":!docs").strip()
    except subprocess.CalledProcessError:  # not a git checkout
        return ""
    return head + ("+changes" if dirty else "")


def measure(nox_args: list[str], streams: int = 1) -> dict:
    """Run the slice (in `streams` parallel nox calls) and collect what its cells recorded."""
    calls = _streams(nox_args, streams)
    before = probe()
    started, wall_clock = time.monotonic(), time.time()
    procs = [
        subprocess.Popen([sys.executable, "-m", "nox", *call], cwd=ROOT, stdout=subprocess.DEVNULL)
        for call in calls
    ]
    codes = [proc.wait() for proc in procs]
    wall = time.monotonic() - started
    after = probe()
    cells = []
    for path in sorted(COMPAT.glob("cell-*.json")):
        if path.stat().st_mtime >= wall_clock:
            record = json.loads(path.read_text())
            cells.append({k: record.get(k) for k in ("key", "status", "setup_seconds",
                                                      "test_seconds", "reused")})  # fmt: skip
    cells.sort(key=lambda c: tuple(version_key(p) for p in c["key"].replace("-py", "-").split("-")))
    return {
        "date": datetime.date.today().isoformat(),
        "machine": f"{os.cpu_count()} cores, Python {platform.python_version()} runs nox",
        "commit": _commit(),
        "probe_seconds": [before, after],
        "calls": [" ".join(["nox", *call]) for call in calls],
        "exit_codes": codes,
        "wall_seconds": round(wall, 1),
        "cells": cells,
    }


def _totals(run: dict) -> dict:
    ran = [c for c in run["cells"] if c["status"] == "ran"]
    n = len(ran) or 1
    return {
        "cells": len(ran),
        "not_run": len(run["cells"]) - len(ran),
        "built": sum(not c["reused"] for c in ran),
        "wall": run["wall_seconds"],
        "per_cell": run["wall_seconds"] * len(run["calls"]) / n,  # per stream: what a cell costs
        "setup": sum(c["setup_seconds"] for c in ran) / n,
        "tests": sum(c["test_seconds"] for c in ran) / n,
    }


def summary(run: dict) -> str:
    t = _totals(run)
    rest = t["per_cell"] - t["setup"] - t["tests"]
    return (
        f"{t['cells']} cells ({t['built']} environments built, {t['not_run']} did not run) in "
        f"{t['wall'] / 60:.1f} min wall with {len(run['calls'])} stream(s); a cell took "
        f"{t['per_cell']:.1f} s of its stream: set-up {t['setup']:.2f} s, pytest (start-up and "
        f"tests) {t['tests']:.2f} s, nox and the rest {rest:.2f} s; speed probe "
        f"{_probe(run)} before/after"
    )


def _probe(run: dict) -> str:
    probes = run.get("probe_seconds")
    return "/".join(f"{p:.2f}" for p in probes) + " s" if probes else "not measured"


def render(data: dict) -> str:
    """docs/matrix-time.md."""
    out = [
        "# How long the matrix takes",
        "",
        "Written by `nox -s timing -- --publish <label> [--streams 2] [-- nox arguments]` "
        "(`-- --check` checks this page against docs/data/matrix-time.json). Per cell: set-up "
        "(environment, wheel, requirements; nothing when reused) and pytest (the process: "
        "interpreter start-up, importing the SDK, the tests); wall time is the whole slice as a "
        "user waits for it, and a cell's share of its stream includes nox itself. The probe is "
        "the seconds a fixed pure-Python loop takes before/after the run (best of three): this "
        "shared host's speed drifts by up to 2x within minutes, so compare runs at similar "
        "probes.",
        "",
        "| run | date, commit | calls | cells (environments built) | wall | a cell, of its "
        "stream | set-up | pytest | probe |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, run in data["runs"].items():
        t = _totals(run)
        calls = "<br>".join(f"`{c}`" for c in run["calls"])
        out.append(
            f"| {label} | {run['date']}, {run.get('commit', '-')} | {calls} | "
            f"{t['cells']} ({t['built']}) | {t['wall'] / 60:.1f} min | {t['per_cell']:.1f} s | "
            f"{t['setup']:.2f} s | {t['tests']:.2f} s | {_probe(run)} |"
        )
    return "\n".join(out) + "\n"
