"""What the matrix showed: the compat cells' JUnit files rendered as Markdown (CI's step summary),
a self-contained HTML page and JSON; the share of each series' added lines the contract tests
run; which cells a pull request needs (`nox -s matrix`); and the scan of every release.

Stdlib only (besides `sdk_matrix`), so the noxfile imports it without an environment.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import sdk_matrix

BUILD = Path("build/compat")
JUNIT = re.compile(r"junit-(.+)-(unpatched|patched)-py(\d+\.\d+)\.xml")
ICONS = {"passed": "✅", "bug-shown": "🐞", "failed": "❌", "obsolete": "⚠️", "not-run": "⚪"}
WORDS = {"failed": "failed", "xpass": "unexpectedly passed", "bug": "bug shown"}
WORDS |= {"passed": "passed", "skipped": "skipped"}
LEGEND = (
    "🐞 bug shown: the unpatched release fails as `compat_tests/expectations.toml` expects · "
    "❌ unexpected failure (or expected failure that passed) · ⚠️ unpatched passes everything "
    "although a series exists: the patch may be obsolete · ⚪ not run · — no such cell"
)


def version_key(version: str) -> tuple:
    """Releases by number; anything else (the weekly `latest`) after them."""
    numbers = re.findall(r"\d+", version)
    return (0, *map(int, numbers)) if re.fullmatch(r"[\d.]+", version) else (1, version)


# --- reading the cells ------------------------------------------------------------------------


@dataclass
class Case:
    point: str  # the test file's stem minus `test_`
    name: str  # the test's name with its parameters; "" for a file that did not collect
    outcome: str  # passed, failed, xpass (strict xfail that passed), bug (xfail), skipped
    message: str = ""
    detail: str = ""

    @property
    def id(self) -> str:
        return f"{self.point}::{self.name}" if self.name else self.point


def parse_junit(path: Path) -> tuple[str, list[Case]]:
    """The suite's name and the cases of one pytest JUnit file (junit_family=legacy)."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        return "", [Case("junit", "", "failed", f"unreadable JUnit file: {exc}")]
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    cases = []
    for tc in root.iter("testcase"):
        point = Path(tc.get("file") or tc.get("name", "")).stem.removeprefix("test_")
        name = tc.get("name", "") if tc.get("classname") else ""
        bad = next((e for e in tc if e.tag in ("failure", "error")), None)
        skipped = tc.find("skipped")
        if bad is not None:
            message = bad.get("message", "")
            outcome = "xpass" if message.startswith("[XPASS(strict)]") else "failed"
            cases.append(Case(point, name, outcome, message, bad.text or ""))
        elif skipped is not None:
            outcome = "bug" if skipped.get("type") == "pytest.xfail" else "skipped"
            cases.append(Case(point, name, outcome, skipped.get("message", "")))
        else:
            cases.append(Case(point, name, "passed"))
    return (suite.get("name", "") if suite is not None else ""), cases


@dataclass
class Cell:
    version: str
    variant: str
    python: str
    series: int = 0  # patches in the release's series; 0 for none
    cases: list[Case] | None = None  # None: no JUnit file, the cell did not run
    suite: str = ""

    @property
    def key(self) -> str:
        return f"{self.version}-{self.variant}-py{self.python}"

    @property
    def counts(self) -> Counter:
        return Counter(c.outcome for c in self.cases or [])

    @property
    def status(self) -> str:
        n = self.counts
        if self.cases is None:
            return "not-run"
        if n["failed"] or n["xpass"] or not self.cases:
            return "failed"
        if n["bug"]:
            return "bug-shown"
        return "obsolete" if self.variant == "unpatched" and self.series else "passed"

    @property
    def label(self) -> str:
        if self.cases is None:
            return "not run"
        text = ", ".join(f"{self.counts[k]} {word}" for k, word in WORDS.items() if self.counts[k])
        return (text or "no tests") + (
            ": patch may be obsolete" if self.status == "obsolete" else ""
        )


def collect(build: Path = BUILD, patches: Path = sdk_matrix.PATCHES, matrix=None) -> list[Cell]:
    """Every cell of the matrix (`sdk_matrix.cells()`), run or not, plus any extra JUnit file."""
    series = {v: len(sdk_matrix.series(v, patches)) for v in sdk_matrix.patched_versions(patches)}
    cells = {}
    for python, version, variant in sdk_matrix.cells() if matrix is None else matrix:
        cells[(version, variant, python)] = Cell(version, variant, python, series.get(version, 0))
    for path in sorted(build.glob("junit-*.xml")):
        match = JUNIT.fullmatch(path.name)
        if match:
            version, variant, python = match.groups()
            cell = cells.setdefault(
                match.groups(), Cell(version, variant, python, series.get(version, 0))
            )
            cell.suite, cell.cases = parse_junit(path)
    return sorted(cells.values(), key=lambda c: (version_key(c.version), version_key(c.python)))


# --- coverage of the series -------------------------------------------------------------------

HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _file_diffs(patch: str) -> list[list]:
    """[old path, new path (None if deleted), hunks] per file of one patch; a hunk is
    (old start, new start, body lines)."""
    diffs: list[list] = []
    lines = patch.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        hunk = HUNK.match(line) if diffs else None
        if line.startswith("diff --git "):
            diffs.append([*re.match(r"diff --git a/(.*) b/(.*)", line).groups(), []])
        elif line.startswith("+++ /dev/null") and diffs:
            diffs[-1][1] = None
        elif hunk:
            count_old, count_new = int(hunk[2] or 1), int(hunk[4] or 1)
            body = []
            while count_old > 0 or count_new > 0:
                i += 1
                if not lines[i].startswith("\\"):
                    body.append(lines[i])
                    count_old -= not lines[i].startswith("+")
                    count_new -= not lines[i].startswith("-")
            diffs[-1][2].append((int(hunk[1]), int(hunk[3]), body))
        i += 1
    return diffs


def _apply_diff(added: set[int], hunks: list[tuple[int, int, list[str]]]) -> set[int]:
    """Move the line numbers in `added` through one file's hunks and add the hunks' new lines."""
    moved, deleted, new, shifts = {}, set(), set(), []
    for old_start, new_start, body in hunks:
        # A line the hunk only re-indents (wrapping code in try/finally, say) is not new code:
        # pair it with the removed line of the same text, as `git diff -w` would.
        removed, old = defaultdict(list), old_start
        for text in body:
            if text.startswith("-"):
                removed[text[1:].strip()].append(old)
            old += not text.startswith("+")
        old, line = old_start, new_start
        for text in body:
            if text.startswith("+"):
                same = removed.get(text[1:].strip()) if text[1:].strip() else None
                if not same or same.pop(0) in added:
                    new.add(line)
                line += 1
            elif text.startswith("-"):
                deleted.add(old)
                old += 1
            else:
                moved[old] = line
                old, line = old + 1, line + 1
        old_len = old - old_start
        # Old lines from `end` on move by the hunk's growth; "-5,0" inserts after line 5.
        shifts.append((old if old_len else old_start + 1, (line - new_start) - old_len))
    kept = {moved.get(n, n + sum(d for end, d in shifts if n >= end)) for n in added - deleted}
    return kept | new


def added_lines(patches: list[Path]) -> dict[str, set[int]]:
    """Lines of the patched tree that the series adds under src/, as `agents/...` paths.

    Each patch moves the lines added by the ones before it, so the result is what
    `git diff -w base..HEAD` shows as added.
    """
    added: dict[str, set[int]] = {}
    for patch in patches:
        for old, new, hunks in _file_diffs(patch.read_text()):
            lines = added.pop(old, set())
            if new is not None:
                added[new] = _apply_diff(lines, hunks)
    return {
        path.removeprefix("src/"): lines
        for path, lines in added.items()
        if path.startswith("src/") and path.endswith(".py") and lines
    }


def _agents_path(measured: str) -> str:
    measured = measured.replace("\\", "/")
    match = re.search(r"site-packages/(agents/.+)$", measured) or re.search(
        r"(?:^|.*/)(agents/.+)$", measured
    )
    return match.group(1) if match else measured


def patch_coverage(version: str, build: Path = BUILD, patches: Path = sdk_matrix.PATCHES):
    """Share of the series' added executable lines that the patched cells ran (all Pythons)."""
    runs = sorted(build.glob(f"coverage-{version}-patched-py*.json"))
    if not runs or version not in sdk_matrix.patched_versions(patches):
        return None
    executed, executable = defaultdict(set), defaultdict(set)
    for run in runs:
        try:
            files = json.loads(run.read_text())["files"]
        except (json.JSONDecodeError, KeyError):  # a cell still writing it, or killed meanwhile
            continue
        for path, data in files.items():
            executed[_agents_path(path)] |= set(data["executed_lines"])
            executable[_agents_path(path)] |= set(data["executed_lines"]) | set(
                data["missing_lines"]
            )
    added = added_lines(sdk_matrix.series(version, patches))
    lines = {(p, n) for p, ns in added.items() for n in ns if n in executable[p]}
    missed = defaultdict(list)
    for p, n in sorted(lines):
        if n not in executed[p]:
            missed[p].append(n)
    covered = len(lines) - sum(map(len, missed.values()))
    share = round(100 * covered / len(lines), 1) if lines else None
    return {"covered": covered, "executable": len(lines), "percent": share, "missed": dict(missed)}


def coverage_text(cov) -> str:
    if not cov:
        return "—"
    if cov["percent"] is None:
        return "no executable lines added"
    return f"{cov['percent']:g}% ({cov['covered']}/{cov['executable']} lines)"


# --- the report -------------------------------------------------------------------------------


def build_report(cells: list[Cell], trigger: str, coverage: dict | None = None) -> dict:
    """Everything the renderers show, as the JSON that tools read."""
    coverage = coverage or {}
    ran = sorted({c.python for c in cells if c.cases is not None}, key=version_key)
    pythons = ran or sorted({c.python for c in cells}, key=version_key)
    releases = []
    for version in sorted({c.version for c in cells}, key=version_key):
        own = [c for c in cells if c.version == version]
        rel = sdk_matrix.RELEASES.get(version)
        if rel:
            base = rel.tag_commit[:7] if rel.tag_commit else "sdist"
        else:  # the weekly `latest` cell names its release as the suite
            base = next((c.suite for c in own if c.suite), "") or "PyPI"
        releases.append(
            {
                "version": version,
                "base": base,
                "patches": own[0].series,
                "coverage": coverage.get(version),
                "cells": [_cell_json(c) for c in own],
            }
        )
    statuses = Counter(c.status for c in cells)
    totals = {
        "cells": len(cells),
        "unexpected": statuses["failed"] + statuses["obsolete"],
        "not_run": statuses["not-run"],
    }
    totals["as_expected"] = totals["cells"] - totals["unexpected"] - totals["not_run"]
    return {"trigger": trigger, "pythons": pythons, "totals": totals, "releases": releases}


def _cell_json(cell: Cell) -> dict:
    cases = cell.cases or []
    return {
        "key": cell.key,
        "variant": cell.variant,
        "python": cell.python,
        "status": cell.status,
        "unexpected": cell.status in ("failed", "obsolete"),
        "label": cell.label,
        "counts": dict(cell.counts),
        "cases": [
            {"id": c.id, "point": c.point, "outcome": c.outcome, "message": c.message}
            | ({"detail": c.detail[:4000]} if c.outcome in ("failed", "xpass") else {})
            for c in cases
        ],
    }


def _columns(report: dict) -> list[tuple[str, str]]:
    return [(variant, py) for py in report["pythons"] for variant in ("unpatched", "patched")]


def _find(release: dict, variant: str, python: str) -> dict | None:
    return next(
        (c for c in release["cells"] if (c["variant"], c["python"]) == (variant, python)), None
    )


def _first_line(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _headline(report: dict) -> str:
    t = report["totals"]
    bases = " · ".join(f"{r['version']} `{r['base']}`" for r in report["releases"])
    icon = "❌" if t["unexpected"] else ("⚪" if t["not_run"] else "✅")
    status = (
        f"{icon} **{t['unexpected']} unexpected** · {t['as_expected']} as expected · "
        f"{t['not_run']} not run ({t['cells']} cells)"
    )
    return f"Trigger: `{report['trigger']}` · bases: {bases}\n\n{status}"


MD_IDS = 15  # failing tests listed per cell; report.html has them all


def _md_text(text: str) -> str:
    return html.escape(_first_line(text), quote=False).replace("|", "\\|")


def render_md(report: dict) -> str:
    columns = _columns(report)
    head = ["SDK", *(f"{v} py{py}" for v, py in columns), "patches", "patch coverage"]
    out = ["### SDK compatibility (contract tests)", "", _headline(report), ""]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    failing, total = [], 0
    for rel in report["releases"]:
        row = [rel["version"]]
        for variant, py in columns:
            cell = _find(rel, variant, py)
            if cell is None:
                row.append("—")
                continue
            label = f"**{cell['label']}**" if cell["unexpected"] else cell["label"]
            row.append(f"{ICONS[cell['status']]} {label}")
            bad = [c for c in cell["cases"] if c["outcome"] in ("failed", "xpass")]
            total += len(bad)
            failing += [
                f"- `{cell['key']}` `{c['id']}`: {_md_text(c['message'])}" for c in bad[:MD_IDS]
            ]
            if len(bad) > MD_IDS:
                failing.append(f"- `{cell['key']}`: {len(bad) - MD_IDS} more in report.html")
        row += [str(rel["patches"] or "0 (baseline)"), coverage_text(rel["coverage"])]
        out.append("| " + " | ".join(row) + " |")
    out += ["", LEGEND]
    if failing:
        out += [
            "",
            f"<details><summary>Failing tests ({total})</summary>",
            "",
            *failing,
            "",
            "</details>",
        ]
    return "\n".join(out) + "\n"


CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1f2328}
h1{font-size:22px;margin:0 0 8px} h2{font-size:17px;margin:28px 0 8px}
table{border-collapse:collapse;margin:6px 0} th,td{border:1px solid #d0d7de;padding:3px 8px;
text-align:left;vertical-align:top} th{background:#f6f8fa} a{color:inherit;text-decoration:none}
td a:hover{text-decoration:underline} .muted{color:#656d76} code{font-size:12px}
.passed{background:#dafbe1} .bug-shown,.bug{background:#ddf4ff} .skipped{background:#f6f8fa}
.failed,.xpass{background:#ffc1ba;font-weight:600} .obsolete{background:#fff1a8;font-weight:600}
.not-run{background:#f6f8fa;color:#656d76}
.grid td{text-align:center;padding:1px 3px;white-space:nowrap} .grid td:first-child{text-align:left}
.grid th{font-size:11px;padding:2px 3px} .pt{display:inline-block;width:15px;border-radius:3px;
font-size:11px;font-weight:600;text-align:center;margin:0 1px}
details{margin:4px 0} summary{cursor:pointer} .release{border:1px solid #d0d7de;border-radius:6px;
padding:4px 10px;margin:8px 0} pre{background:#f6f8fa;padding:6px;overflow:auto;max-height:260px;
font-size:12px;margin:4px 0}
"""
JS = """function openHash(){
var t=document.getElementById(decodeURIComponent(location.hash.slice(1)));
for(var e=t;e;e=e.parentElement)if(e.tagName=="DETAILS")e.open=true;if(t)t.scrollIntoView();}
addEventListener("hashchange",openHash);openHash();"""
# Plain glyphs, not emoji: the page must read the same without an emoji font.
SYMBOLS = {
    "passed": "✓",
    "bug-shown": "◆",
    "failed": "✗",
    "obsolete": "⚠",
    "skipped": "s",
    "not-run": "○",
}
HTML_LEGEND = {
    "passed": "passed",
    "bug-shown": "bug shown: the unpatched release fails as expectations.toml expects",
    "failed": "unexpected failure, or an expected failure that passed",
    "obsolete": "unpatched passes everything although a series exists: the patch may be obsolete",
    "not-run": "not run",
}


def _point_status(cell: dict | None, point: str) -> str | None:
    """A cell's outcome for one contract point; None when the cell does not exist."""
    if cell is None:
        return None
    outcomes = {c["outcome"] for c in cell["cases"] if c["point"] == point}
    for status, found in (("failed", "failed"), ("failed", "xpass"), ("bug-shown", "bug")):
        if found in outcomes:
            return status
    return "passed" if "passed" in outcomes else ("skipped" if outcomes else "not-run")


def _worst(statuses: list[str | None]) -> str | None:
    order = ["failed", "bug-shown", "passed", "skipped", "not-run"]
    return next((s for s in order if s in statuses), None)


def render_html(report: dict) -> str:
    e = html.escape
    columns = _columns(report)
    points = sorted(
        {c["point"] for r in report["releases"] for cell in r["cells"] for c in cell["cases"]}
    )
    t = report["totals"]
    bases = ", ".join(f"{r['version']} <code>{e(r['base'])}</code>" for r in report["releases"])
    out = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        "<title>SDK compatibility report</title><style>" + CSS + "</style></head><body>",
        "<h1>SDK compatibility (contract tests)</h1>",
        f"<p><b class={'failed' if t['unexpected'] else 'passed'}>"
        f"&nbsp;{t['unexpected']} unexpected&nbsp;</b>"
        f" · {t['as_expected']} as expected · {t['not_run']} not run ({t['cells']} cells)"
        f" · trigger <code>{e(report['trigger'])}</code></p>",
        f"<p class=muted>Bases: {bases}</p>",
        "<p class=muted>"
        + " · ".join(
            f"<span class='pt {k}'>{SYMBOLS[k]}</span> {e(v)}" for k, v in HTML_LEGEND.items()
        )
        + " · — no such cell</p>",
        "<h2>Matrix</h2><table><tr><th>SDK</th>",
    ]
    out += [f"<th>{v}<br><span class=muted>py{py}</span></th>" for v, py in columns]
    out.append("<th>patches</th><th>patch coverage</th></tr>")
    for rel in report["releases"]:
        v = e(rel["version"])
        out.append(f"<tr><th><a href='#r-{v}'>{v}</a></th>")
        for variant, py in columns:
            cell = _find(rel, variant, py)
            if cell is None:
                out.append("<td class=muted>—</td>")
            else:
                text = f"{SYMBOLS[cell['status']]} {e(cell['label'])}"
                out.append(
                    f"<td class={cell['status']}><a href='#c-{e(cell['key'])}'>{text}</a></td>"
                )
        out.append(
            f"<td>{rel['patches'] or '0 (baseline)'}</td>"
            f"<td>{coverage_text(rel['coverage'])}</td></tr>"
        )
    out.append("</table>")

    out.append(
        "<h2>Contract points</h2><p class=muted>Per release: unpatched | patched, over every Python"
        " that ran (worst outcome); click for the release.</p><table class=grid><tr><th>point</th>"
    )
    out += [
        f"<th><a href='#r-{e(r['version'])}'>{e(r['version'])}</a></th>" for r in report["releases"]
    ]
    out.append("</tr>")
    for point in points:
        out.append(f"<tr><td><a href='#p-{e(point)}'>{e(point)}</a></td>")
        for rel in report["releases"]:
            spans = []
            for variant in ("unpatched", "patched"):
                status = _worst(
                    [_point_status(_find(rel, variant, py), point) for _, py in columns]
                )
                if status:
                    title = f"{rel['version']} {variant}: {status}"
                    spans.append(
                        f"<span class='pt {status}' title='{e(title)}'>{SYMBOLS[status]}</span>"
                    )
            out.append(f"<td><a href='#r-{e(rel['version'])}'>{''.join(spans)}</a></td>")
        out.append("</tr>")
    out.append("</table>")

    out.append("<h2>By contract point</h2>")
    for point in points:
        out += _point_html(report, point, columns)
    out.append("<h2>By release</h2>")
    for rel in report["releases"]:
        out += _release_html(rel, columns, points)
    out.append("<script>" + JS + "</script></body></html>")
    return "\n".join(out) + "\n"


def _point_cell(cell: dict | None, point: str) -> str:
    """One table cell: a cell's outcome for one point, its failing tests as the tooltip."""
    status = _point_status(cell, point)
    if status is None:
        return "<td class=muted>—</td>"
    cases = [c for c in cell["cases"] if c["point"] == point]
    n = Counter(c["outcome"] for c in cases)
    text = ", ".join(f"{n[k]} {w}" for k, w in WORDS.items() if n[k]) or "not run"
    tip = "\n".join(f"{WORDS[c['outcome']]}: {c['id']}" for c in cases if c["outcome"] != "passed")
    link = f"<a href='#c-{html.escape(cell['key'])}' title='{html.escape(tip)}'>"
    return f"<td class={status}>{link}{SYMBOLS[status]} {html.escape(text)}</a></td>"


def _point_html(report: dict, point: str, columns: list[tuple[str, str]]) -> list[str]:
    e = html.escape
    found = [_find(rel, v, py) for rel in report["releases"] for v, py in columns]
    bad = any(_point_status(cell, point) == "failed" for cell in found)
    out = [f"<details class=release id='p-{e(point)}'><summary><b>{e(point)}</b>"]
    out.append(f" <span class=muted>compat_tests/test_{e(point)}.py</span>")
    out.append(
        (" · <span class=failed>&nbsp;unexpected&nbsp;</span>" if bad else "") + "</summary>"
    )
    out.append("<table class=grid>")
    out.append(
        "<tr><th>SDK</th>" + "".join(f"<th>{v}<br>py{py}</th>" for v, py in columns) + "</tr>"
    )
    for rel in report["releases"]:
        out.append(f"<tr><td><a href='#r-{e(rel['version'])}'>{e(rel['version'])}</a></td>")
        out += [_point_cell(_find(rel, v, py), point) for v, py in columns]
        out.append("</tr>")
    return out + ["</table></details>"]


def _series_text(patches: int) -> str:
    return f"series of {patches} patch{'es' if patches > 1 else ''}" if patches else "no series"


def _release_html(rel: dict, columns: list[tuple[str, str]], points: list[str]) -> list[str]:
    e = html.escape
    cells = [c for c in (_find(rel, v, py) for v, py in columns) if c]
    statuses = {c["status"] for c in cells}
    worst = next((s for s in ("failed", "obsolete") if s in statuses), "")
    cov = rel["coverage"]
    out = [
        f"<details class=release id='r-{e(rel['version'])}'><summary><b>{e(rel['version'])}</b>"
        f" · base <code>{e(rel['base'])}</code> · {_series_text(rel['patches'])}"
        f" · patch coverage {coverage_text(cov)}"
        + (f" · <span class={worst}>&nbsp;unexpected&nbsp;</span>" if worst else "")
        + "</summary>"
    ]
    if cov and cov["missed"]:
        missed = "; ".join(f"{e(p)}: {', '.join(map(str, ns))}" for p, ns in cov["missed"].items())
        out.append(f"<p class=muted>Added lines the tests do not run: {missed}</p>")
    out.append("<table class=grid><tr><th>point</th>")
    out += [
        f"<th><a href='#c-{e(c['key'])}'>{c['variant']}<br>py{c['python']}</a></th>" for c in cells
    ]
    out.append("</tr>")
    for point in points:
        out.append(f"<tr><td><a href='#p-{e(point)}'>{e(point)}</a></td>")
        out += [_point_cell(cell, point) for cell in cells] + ["</tr>"]
    out.append("</table>")
    for cell in cells:
        out.append(
            f"<details id='c-{e(cell['key'])}'><summary class={cell['status']}>"
            f"{SYMBOLS[cell['status']]} <code>{e(cell['key'])}</code>: {e(cell['label'])}</summary>"
        )
        if cell["cases"]:
            out.append("<table><tr><th>test</th><th>outcome</th><th>message</th></tr>")
            for case in sorted(cell["cases"], key=lambda c: list(WORDS).index(c["outcome"])):
                shown = case.get("detail", "").strip() not in ("", case["message"].strip())
                detail = f"<pre>{e(case['detail'])}</pre>" if shown else ""
                outcome = WORDS[case["outcome"]]
                out.append(
                    f"<tr><td><code>{e(case['id'])}</code></td>"
                    f"<td class={case['outcome']}>{outcome}</td>"
                    f"<td>{e(_first_line(case['message'], 300))}{detail}</td></tr>"
                )
            out.append("</table>")
        out.append("</details>")
    out.append("</details>")
    return out


def write_reports(build: Path = BUILD, patches: Path = sdk_matrix.PATCHES, matrix=None) -> dict:
    """report.md (appended to $GITHUB_STEP_SUMMARY when set), report.html and report.json."""
    cells = collect(build, patches, matrix)
    coverage = {v: patch_coverage(v, build, patches) for v in sdk_matrix.patched_versions(patches)}
    report = build_report(cells, os.environ.get("GITHUB_EVENT_NAME") or "local", coverage)
    build.mkdir(parents=True, exist_ok=True)
    md = render_md(report)
    (build / "report.md").write_text(md, encoding="utf-8")
    (build / "report.html").write_text(render_html(report), encoding="utf-8")
    (build / "report.json").write_text(
        json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8"
    )
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as summary:
            summary.write(md)
    return report


# --- which cells a CI run needs ---------------------------------------------------------------

EVERYTHING = (
    "noxfile.py",
    "sdk_matrix.py",
    "compat_tests/expectations.toml",
    "requirements-tools.txt",
    ".github/workflows/compat.yml",
)


def select(sessions: list[dict], changed: list[str] | None, latest: bool = False) -> list[dict]:
    """CI's include list from `nox --json -l -s compat`.

    changed=None (push, schedule): every cell. On a pull request: every cell when the matrix
    itself changed (EVERYTHING); the `ci`-tagged cells (each release on CI's Python, the edges on
    the others) when compat_tests/ changed; all cells of a release whose patches/<version>/ did.
    `latest` adds the newest PyPI release, allowed to fail.
    """
    changed_list = changed or []
    versions = {
        p.split("/")[1] for p in changed_list if p.startswith("patches/") and p.count("/") >= 2
    }
    everything = changed is None or any(p in EVERYTHING for p in changed_list)
    tests = any(p.startswith("compat_tests/") for p in changed_list)
    include = [
        {
            "session": s["session"],
            "python": s["python"],
            "version": s["call_spec"]["sdk"],
            "variant": s["call_spec"]["variant"],
            "experimental": False,
        }
        for s in sessions
        if everything or s["call_spec"]["sdk"] in versions or (tests and "ci" in s["tags"])
    ]
    if latest:
        python = sdk_matrix.CI_PYTHON
        include.append(
            {
                "session": "latest",
                "python": python,
                "version": "latest",
                "variant": "unpatched",
                "experimental": True,
            }
        )
    return include


def matrix_include(argv: list[str]) -> str:
    """`nox -s matrix -- [--changed PATH...] [--latest]`: the include list as one JSON line."""
    parser = argparse.ArgumentParser(prog="nox -s matrix --")
    parser.add_argument("--changed", nargs="*", help="paths a pull request changes")
    parser.add_argument("--latest", action="store_true", help="add the newest PyPI release")
    args = parser.parse_args(argv)
    listing = [sys.executable, "-m", "nox", "--json", "-l", "-s", "compat"]
    sessions = json.loads(
        subprocess.run(listing, capture_output=True, text=True, check=True).stdout
    )
    return json.dumps(select(sessions, args.changed, args.latest))


# --- the scan of every release ----------------------------------------------------------------

SCAN_START, SCAN_END = "<!-- scan:start -->", "<!-- scan:end -->"
SCAN_FILE = re.compile(r"openai[_-]agents-(\d+(?:\.\d+)*)(-py3-none-any\.whl|\.tar\.gz)")


def scan_releases(files: list[dict]) -> list[dict]:
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


def scan_result(release: dict, junit: Path | None, note: str = "") -> dict:
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


def render_scan(results: dict[str, dict], python: str = sdk_matrix.CI_PYTHON) -> str:
    versions = sorted(results, key=version_key)
    points = sorted({p for r in results.values() for p in r["points"]})
    out = [
        f"Python {python}, unpatched, no expectations (`COMPAT_NO_EXPECTATIONS=1`), "
        f"dependencies as of each release's upload: {len(versions)} releases"
        + (f", {versions[0]} to {versions[-1]}" if versions else "")
        + ". Regenerate with `nox -s scan` (`-- --force` re-runs every release).",
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


def load_scan(directory: Path) -> dict[str, dict]:
    path = directory / "scan.json"
    return json.loads(path.read_text())["releases"] if path.exists() else {}


def save_scan(directory: Path, results: dict[str, dict]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    ordered = {v: results[v] for v in sorted(results, key=version_key)}
    data = {"python": sdk_matrix.CI_PYTHON, "releases": ordered}
    (directory / "scan.json").write_text(json.dumps(data, indent=1) + "\n")


def update_readme(readme: Path, table: str) -> None:
    """Replace what stands between the scan markers."""
    text = readme.read_text()
    if SCAN_START not in text or SCAN_END not in text:
        raise sdk_matrix.MatrixError(f"{readme} lacks the {SCAN_START} / {SCAN_END} markers")
    head, rest = text.split(SCAN_START, 1)
    tail = rest.split(SCAN_END, 1)[1]
    readme.write_text(f"{head}{SCAN_START}\n{table}\n{SCAN_END}{tail}")
