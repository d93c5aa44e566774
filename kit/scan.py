"""The scan: the contract suite, unpatched and without expectations, against every final release
on PyPI (one Python CI_PYTHON cell each, dependencies as of the release's upload): where each
contract point holds. Its page is docs/scan.md; the data, docs/data/scan.json."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Callable

from . import BUILD, ROOT, MatrixError, docs, sdists, version_key
from .envs import REQUIREMENTS, interpreter, uv
from .junit import read as parse_junit
from .releases import CI_PYTHON
from .report import first_line as _first_line

SCAN_FILE = re.compile(r"openai[_-]agents-(\d+(?:\.\d+)*)(-py3-none-any\.whl|\.tar\.gz)")


def releases_on_pypi(files: list[dict]) -> list[dict]:
    """Every final, unyanked release in the index: version, upload time and the file to install."""
    releases: dict[str, dict] = {}
    for f in files:
        match = SCAN_FILE.fullmatch(f["filename"])
        if not match or f.get("yanked"):
            continue
        rel = releases.setdefault(
            match[1], {"version": match[1], "uploaded": f["upload-time"], "url": f["url"]}
        )
        rel["uploaded"] = max(rel["uploaded"], f["upload-time"])
        if match[2].endswith(".whl"):
            rel["url"] = f["url"]
    return sorted(releases.values(), key=lambda r: version_key(r["version"]))


CANARY = "alive_until_release"  # point 1: what every release does unless the suite cannot drive it
WALK = "nothing_reachable"  # point 16: its failures name each path from a released result
PATH = re.compile(r"^\s*(result\S*) \(Agent ", re.M)
SCENARIO = re.compile(r"^(test_\w+)_leaves_no_agent_reachable\[(\w+)\]$")
HOWS = {  # point 16's tests: how each drives its scenarios, and the page's words for that
    "test_release": ("run", "run", "every plain run"),
    "test_streamed_release": ("run_streamed", "streamed", "every streamed scenario"),
    "test_unread_stream_release": ("unread_stream", "unread stream", "every unread stream"),
    "test_streamed_release_after_error": ("after_error", "streamed error", "every streamed error"),
}
WORDS = {how: words for how, words, _ in HOWS.values()}


def reaches(cases: list) -> dict[str, list[str]]:
    """Point 16's findings: each path by which a released result still reaches an agent, with
    the scenarios that showed it (`feature-run`, `feature-run_streamed`)."""
    found: dict[str, set[str]] = {}
    for case in cases:
        scenario = _scenario(case.name)
        if case.point == WALK and case.outcome == "failed" and scenario:
            for path in PATH.findall(case.message):
                found.setdefault(path, set()).add(scenario)
    return {path: sorted(scenarios) for path, scenarios in sorted(found.items())}


def _scenario(name: str) -> str | None:
    """`feature-how` (`handoff-run_streamed`, `max_turns-after_error`), from a test of point 16."""
    match = SCENARIO.match(name)
    if not match or match[1] not in HOWS:
        return None
    return f"{match[2]}-{HOWS[match[1]][0]}"


def _scenarios(shown: list[str], ran: set[str]) -> str:
    """`every scenario`, `every streamed scenario` (and the like), or the features, each with
    the ways it was driven unless it showed the path in every way it ran."""
    every = [("", "every scenario")] + [(f"-{how}", every) for how, _, every in HOWS.values()]
    for how, words in every:
        wanted = {s for s in ran if s.endswith(how)}
        if wanted and wanted <= set(shown):
            rest = sorted(set(shown) - wanted)
            return f"{words}, {_features(rest, ran)}" if rest else words
    return _features(shown, ran)


def _features(shown: list[str], ran: set[str]) -> str:
    features: dict[str, list[str]] = {}
    for scenario in sorted(shown):
        feature, how = scenario.rsplit("-", 1)
        features.setdefault(feature, []).append(how)
    out = []
    for feature, hows in features.items():
        every = {s.rsplit("-", 1)[1] for s in ran if s.rsplit("-", 1)[0] == feature}
        ways = ", ".join(WORDS[h] for h in WORDS if h in hows)
        out.append(feature if set(hows) >= every else f"{feature} ({ways})")
    return ", ".join(out)


def result(release: dict, junit: Path | None, note: str = "") -> dict:
    """One release's contract points: holds, breaks, or n/a (its test file did not collect).

    Keeping agents alive until release is every release's default, so where no test of that
    point passes the suite cannot drive the release at all (0.0.2 wants an API key, 0.0.4's
    ModelResponse lacks `response_id`): the release says nothing about the contract, and its
    note says so and why.
    """
    cases = parse_junit(junit)[1] if junit and junit.exists() else []
    points: dict[str, str] = {}
    for case in cases:
        status = "n/a" if not case.name else ("holds" if case.outcome == "passed" else "breaks")
        status = "n/a" if case.outcome == "skipped" else status
        previous = points.get(case.point, "holds")
        points[case.point] = max(previous, status, key=["holds", "breaks", "n/a"].index)
    canary = [c for c in cases if c.point == CANARY] or cases
    if not note and not any(c.outcome == "passed" for c in canary):
        note = "suite cannot run"
    why = Counter(_first_line(c.message, 200) for c in canary if c.outcome == "failed")
    return {
        "uploaded": release["uploaded"],
        "points": {} if note else points,
        "failed": [c.id for c in cases if c.outcome in ("failed", "xpass")],
        "reaches": {} if note else reaches(cases),
        "ran": [c.name for c in cases if c.point == WALK and c.outcome != "skipped"],
        "note": note,
        "why": why.most_common(1)[0][0] if note and why else "",
    }


def _runs(versions: list[str], statuses: list[str], want: str) -> list[tuple[str, str, str | None]]:
    """Consecutive releases with status `want`: (first, last, the next release that holds)."""
    runs, start = [], None
    for i, status in enumerate(statuses + ["end"]):
        if status == want and start is None:
            start = i
        elif status != want and start is not None:
            after = next(
                (versions[j] for j in range(i, len(versions)) if statuses[j] == "holds"), None
            )
            runs.append((versions[start], versions[i - 1], after))
            start = None
    return runs


def _groups(versions: list[str], keys: list) -> list[list]:
    """Consecutive releases with equal keys: [first, last, key]."""
    groups: list[list] = []
    for version, key in zip(versions, keys):
        if groups and groups[-1][2] == key:
            groups[-1][1] = version
        else:
            groups.append([version, version, key])
    return groups


def _span(first: str, last: str) -> str:
    return first if first == last else f"{first} – {last}"


def render(data: dict) -> str:
    """docs/scan.md from docs/data/scan.json."""
    results, python = data["releases"], data["python"]
    versions = sorted(results, key=version_key)
    points = sorted({p for r in results.values() for p in r["points"]})
    out = [
        "# Scan of every release",
        "",
        f"Python {python}, unpatched, no expectations (`COMPAT_NO_EXPECTATIONS=1`), "
        f"dependencies as of each release's upload: {len(versions)} releases"
        + (f", {versions[0]} to {versions[-1]}" if versions else "")
        + ". Written by `nox -s scan` (`-- --force` re-runs every release).",
        "",
        "| contract point | first release where it holds | breaks again in |",
        "|---|---|---|",
    ]
    for point in points:
        statuses = [results[v]["points"].get(point, "n/a") for v in versions]
        first = next((i for i, s in enumerate(statuses) if s == "holds"), None)
        if first is None:
            out.append(f"| {point} | never | — |")
            continue
        again = _runs(versions[first:], statuses[first:], "breaks")
        text = "; ".join(
            _span(a, b) + (f" (holds again in {after})" if after else " (still broken)")
            for a, b, after in again
        )
        out.append(f"| {point} | {versions[first]} | {text or '—'} |")
    whys = [(r.get("why") or r["note"]) if r["note"] else "" for r in map(results.get, versions)]
    cannot = [
        f"{_span(a, b)} (`{why.replace('`', chr(39))}`)"
        for a, b, why in _groups(versions, whys)
        if why
    ]
    if cannot:
        out += ["", "n/a (suite cannot run): " + "; ".join(cannot) + "."]
    out += _reach_table(versions, results)
    out += [
        "",
        "<details><summary>Every release (✓ holds, ✗ breaks, – did not collect)</summary>",
        "",
    ]
    out += ["| releases | " + " | ".join(points) + " |", "|---|" + "---|" * len(points)]
    symbol = {"holds": "✓", "breaks": "✗", "n/a": "–"}
    rows = [
        [f"n/a ({r['note']})"] + [""] * (len(points) - 1)
        if r["note"]
        else [symbol[r["points"].get(p, "n/a")] for p in points]
        for r in map(results.get, versions)
    ]
    out += [f"| {_span(a, b)} | " + " | ".join(row) + " |" for a, b, row in _groups(versions, rows)]
    out += ["", "</details>"]
    return "\n".join(out)


def _reach_table(versions: list[str], results: dict) -> list[str]:
    """What a released result still reaches (point 16), per run of releases that agree."""
    scanned = [v for v in versions if "reaches" in results[v] and not results[v]["note"]]

    def cell(version: str) -> str:
        entry = results[version]
        if entry["points"].get(WALK) == "n/a":
            return "point 16 did not run"
        ran = set(filter(None, map(_scenario, entry["ran"])))
        paths = [f"`{p}`: {_scenarios(s, ran)}" for p, s in entry["reaches"].items()]
        if not paths and entry["points"].get(WALK) == "breaks":
            return "no `release_agents()`"
        return "<br>".join(paths) or "nothing"

    if not scanned:
        return []
    out = [
        "",
        "## What a released result still reaches (point 16)",
        "",
        "The paths from a result to an agent that a walk of its strong references finds after "
        "`release_agents()`, and the scenarios that show them: an SDK feature, run, streamed, "
        "streamed and left unread after one event, or streamed into an error.",
        "",
        "| releases | paths |",
        "|---|---|",
    ]
    rows = _groups(scanned, [cell(v) for v in scanned])
    return out + [f"| {_span(a, b)} | {text} |" for a, b, text in rows]


def run(release: dict, junit: Path) -> dict:
    """One release from PyPI in a fresh environment, no expectations; its points."""
    junit.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        python = f"{tmp}/venv/bin/python"
        try:
            uv("venv", "--quiet", "--python", interpreter(CI_PYTHON) or CI_PYTHON, f"{tmp}/venv")
            pip = ("pip", "install", "--quiet", "--python", python)
            uv(*pip, "--exclude-newer", release["uploaded"], release["url"])
            uv(*pip, "-r", str(REQUIREMENTS))  # may be newer than the release
        except MatrixError:
            return result(release, None, "cannot install")
        subprocess.run(
            [
                python,
                "-m",
                "pytest",
                "compat_tests",
                "-q",
                "--continue-on-collection-errors",
                f"--junitxml={junit}",
            ],
            cwd=ROOT,
            env={**os.environ, "COMPAT_NO_EXPECTATIONS": "1", "COMPAT_VARIANT": "unpatched"},
            capture_output=True,
        )
    return result(release, junit)


def update(versions: list[str] | None, force: bool, log: Callable[[str], None]) -> None:
    """Scan the releases not in docs/data/scan.json yet (or `versions`, or all with `force`),
    and write docs/scan.md after each."""
    data = docs.load("scan") or {"python": CI_PYTHON, "releases": {}}
    for release in releases_on_pypi(sdists.index_files()):
        version = release["version"]
        wanted = version in versions if versions else version not in data["releases"]
        if wanted or force:
            entry = run(release, BUILD / "scan" / f"junit-{version}.xml")
            data["releases"] = docs.merged(data["releases"], version, entry)
            docs.publish("scan", data, render)
            log(f"{version}: {entry['note'] or 'ran'}")
