"""What the matrix showed: every cell of the matrix with what its JUnit file says, as the data
that `kit.render` turns into Markdown, HTML and JSON."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from . import BUILD, PATCHES, expectations, releases, version_key
from .junit import WORDS, Case
from .junit import parse as parse_junit
from .releases import RELEASES, patched_versions, series

COMPAT = BUILD / "compat"
JUNIT = re.compile(r"junit-(.+)-(unpatched|patched)-py(\d+\.\d+)\.xml")
# One symbol per status, the same in report.md and report.html (plain glyphs: no emoji font
# needed), and what each means.
ICONS = {
    "passed": "✓",
    "bug-shown": "◆",
    "failed": "✗",
    "partial": "◐",
    "interrupted": "‖",
    "obsolete": "⚠",
    "unavailable": "∅",
    "not-run": "○",
}
LEGEND = {
    "passed": "passed",
    "bug-shown": "bug shown: the unpatched release fails as compat_tests/expectations.toml expects",
    "failed": "failed: an unexpected failure, an expected failure that passed, or a cell that "
    "stopped before its tests (with its reason)",
    "partial": "partial: the run selected or ran fewer tests than the suite has (-k, --deselect, "
    "-x, or a JUnit file cut short)",
    "interrupted": "interrupted: the cell was stopped (Ctrl-C, killed) in setup, tests or coverage",
    "obsolete": "unpatched passes everything although a series exists: the patch may be obsolete",
    "unavailable": "interpreter not available here: the cell could not run on this machine",
    "not-run": "not run: nobody ran this cell",
}
# Set in GitHub Actions, which installs every Python: there a missing interpreter fails the cell,
# and the headline is green only when every cell ran.
REQUIRE_PYTHONS = os.environ.get("COMPAT_REQUIRE_PYTHONS") == "1"
UNEXPECTED = ("failed", "obsolete")
INCOMPLETE = ("partial", "interrupted")  # neither expected nor a failure: run the cell again


@dataclass
class CellResult:
    version: str
    variant: str
    python: str
    series: int = 0  # patches in the release's series; 0 for none
    cases: list[Case] | None = None  # None: no JUnit file
    suite: str = ""
    record: dict | None = None  # what the cell wrote of its run (kit.cells); None: never ran
    problem: str = ""  # its record or JUnit file could not be read

    @property
    def key(self) -> str:
        return f"{self.version}-{self.variant}-py{self.python}"

    @property
    def counts(self) -> Counter:
        return Counter(c.outcome for c in self.cases or [])

    @property
    def stopped(self) -> str:
        """The phase the cell was interrupted in, or killed in (its record still `running`)."""
        record = self.record or {}
        return record.get("phase", "") if record.get("status") in ("interrupted", "running") else ""

    @property
    def shortfall(self) -> str:
        """How a finished run fell short of the suite: fewer tests selected, or fewer ran."""
        record = self.record or {}
        if record.get("status") != "ran" or not self.cases:
            return ""
        counted = [record.get(k) for k in ("suite_tests", "tests", "items")]
        if not all(isinstance(n, int) for n in counted):
            return "partial: the cell did not record how many tests its suite has"
        suite, selected, items = counted
        if selected < suite:
            return f"partial: {selected} of {suite} tests selected"
        if len(self.cases) < items:
            return f"partial: {len(self.cases)} of {items} tests ran"
        return ""

    @property
    def reason(self) -> str:
        """Why a cell has no complete results: it stopped, its files are unreadable, it wrote no
        JUnit file, or it ran too few tests."""
        record = self.record or {}
        if self.stopped:
            how = (
                "interrupted" if record["status"] == "interrupted" else "killed (or still running)"
            )
            ran = (
                f", {len(self.cases or [])} of {record['items']} tests ran"
                if record.get("items")
                else ""
            )
            return f"{how} during {self.stopped}{ran}"
        if self.problem or record.get("reason"):
            return self.problem or record["reason"]
        if self.record and self.cases is None:
            return "the cell ran but wrote no JUnit file"
        return self.shortfall

    @property
    def status(self) -> str:
        n = self.counts
        if self.record and self.record["status"] == "unavailable":
            return "unavailable"
        if n["failed"] or n["xpass"]:  # a failure is one, however the run ended
            return "failed"
        if self.stopped:
            return "interrupted"
        if self.shortfall:
            return "partial"
        if self.reason or self.cases == []:
            return "failed"
        if self.cases is None:
            return "not-run"
        if n["bug"]:
            return "bug-shown"
        return "obsolete" if self.variant == "unpatched" and self.series else "passed"

    @property
    def label(self) -> str:
        if self.status == "unavailable":
            return "interpreter not available here"
        if self.record and self.record["status"] == "failed":
            return f"failed before its tests: {first_line(self.reason, 120)}"
        if self.cases is None and not self.reason:
            return "not run"
        text = ", ".join(f"{self.counts[k]} {word}" for k, word in WORDS.items() if self.counts[k])
        text += ": patch may be obsolete" if self.status == "obsolete" else ""
        reason = first_line(self.reason, 120)
        if text and reason:
            return f"{text} ({reason})"
        return text or reason or "no tests"


def _absent_api(case: Case, absent: set[str]) -> Case:
    """An expected failure whose causes are all [[absent]]: the release lacks the API, which is
    no bug, so it neither marks the cell as showing one nor fails a patched cell."""
    ids = expectations.cause_ids(case.message) if case.outcome == "bug" else []
    return dataclasses.replace(case, outcome="absent") if ids and set(ids) <= absent else case


def _read_record(path: Path) -> tuple[dict | None, str]:
    """A cell's record, or None and why: a record cut short (say, by a full disk) is none."""
    if not path.exists():
        return None, ""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        record = None
    if isinstance(record, dict) and isinstance(record.get("status"), str):
        return record, ""
    return None, f"record unreadable: {path}"


def collect(build: Path = COMPAT, patches: Path = PATCHES, matrix: list | None = None) -> list:
    """Every cell of the matrix (`releases.cells()`), run or not, plus any extra JUnit file."""
    counts = {v: len(series(v, patches)) for v in patched_versions(patches)}
    absent = {c.id for c in expectations.load() if c.kind == "absent"}
    found = {}
    for c in releases.cells(patches) if matrix is None else matrix:
        found[(c.version, c.variant, c.python)] = CellResult(
            c.version, c.variant, c.python, counts.get(c.version, 0)
        )
    for path in sorted(build.glob("junit-*.xml")):
        match = JUNIT.fullmatch(path.name)
        if match:
            version, variant, python = match.groups()
            cell = found.setdefault(
                match.groups(), CellResult(version, variant, python, counts.get(version, 0))
            )
            try:
                cell.suite, cases = parse_junit(path)
            except (ET.ParseError, OSError):
                cell.problem = f"JUnit file unreadable: {path}"
                continue
            cell.cases = [_absent_api(case, absent) for case in cases]
    for cell in found.values():
        cell.record, problem = _read_record(build / f"cell-{cell.key}.json")
        cell.problem = cell.problem or problem
    return sorted(found.values(), key=lambda c: (version_key(c.version), version_key(c.python)))


def build_report(cells: list[CellResult], trigger: str, coverage: dict | None = None) -> dict:
    """Everything the renderers show, as the JSON that tools read."""
    coverage = coverage or {}
    ran = sorted({c.python for c in cells if c.record or c.cases is not None}, key=version_key)
    pythons = ran or sorted({c.python for c in cells}, key=version_key)
    out = []
    for version in sorted({c.version for c in cells}, key=version_key):
        own = [c for c in cells if c.version == version]
        rel = RELEASES.get(version)
        if rel:
            base = rel.tag[:7] if rel.tag else "sdist"
        else:  # the weekly `latest` cell names its release as the suite
            base = next((c.suite for c in own if c.suite), "") or "PyPI"
        out.append(
            {
                "version": version,
                "base": base,
                "patches": own[0].series,
                "coverage": coverage.get(version),
                "verdict": _release_verdict(own),
                "cells": [_cell_json(c) for c in own],
            }
        )
    statuses = Counter(c.status for c in cells)
    totals = {
        "cells": len(cells),
        "unexpected": sum(statuses[s] for s in UNEXPECTED),
        "partial": sum(statuses[s] for s in INCOMPLETE),
        "unavailable": statuses["unavailable"],
        "not_run": statuses["not-run"],
    }
    totals["as_expected"] = len(cells) - sum(v for k, v in totals.items() if k != "cells")
    return {
        "trigger": trigger,
        "require_pythons": REQUIRE_PYTHONS,
        "pythons": pythons,
        "totals": totals,
        "releases": out,
        "failures": _failures(cells),
        "causes": _causes(cells),
    }


def _pythons(cells: list[CellResult]) -> str:
    return ", ".join(sorted({c.python for c in cells}, key=version_key))


def _failing_points(cell: CellResult) -> list[str]:
    if cell.status == "obsolete":
        return ["nothing (unpatched passes: patch may be obsolete)"]
    bad = [k.point for k in cell.cases or [] if k.outcome in ("failed", "xpass")]
    return list(dict.fromkeys(bad)) or ["no test results"]


def _release_verdict(cells: list[CellResult]) -> dict:
    """One release over the cells that ran (those nobody ran do not count): fails (which contract
    points), incomplete, fixed (holds, for a release without a series), or not run."""
    ran = [c for c in cells if c.status not in ("not-run", "unavailable")]
    lacking = [c for c in cells if c.status == "unavailable"]
    lacks = f"; Python {_pythons(lacking)} not available here" if lacking else ""
    bad = [c for c in ran if c.status in UNEXPECTED]
    if bad:
        points = list(dict.fromkeys(p for c in bad for p in _failing_points(c)))
        variants = dict.fromkeys(c.variant for c in bad)
        where = "; ".join(
            f"{v} on {_pythons([c for c in bad if c.variant == v])}" for v in variants
        )
        return {"verdict": "failed", "text": f"fails {', '.join(points)} ({where}){lacks}"}
    partial = [c for c in ran if c.status in INCOMPLETE]
    if partial:
        text = f"incomplete: {len(partial)} of {len(ran)} cells partial or interrupted, run again"
        return {"verdict": "incomplete", "text": text}
    patched = [c for c in ran if c.variant == "patched"]
    if not ran or (cells[0].series and not patched):
        why = ": no patched cell ran" if ran else ""
        return {"verdict": "not-run", "text": f"not run{why}{lacks}"}
    if cells[0].series:
        return {"verdict": "passed",
                "text": f"fixed on every Python that ran: {_pythons(patched)}{lacks}"}  # fmt: skip
    bugs = [c for c in ran if c.status == "bug-shown"]  # the weekly `latest`: no series
    if bugs:
        return {"verdict": "bug-shown", "text": f"bug shown on {_pythons(bugs)}, no series{lacks}"}
    return {"verdict": "passed", "text": f"holds on every Python that ran: {_pythons(ran)}{lacks}"}


def _message(text: str) -> str:
    """A failure's first line, with what differs between runs (addresses) left out."""
    return re.sub(r"0x[0-9a-f]+", "0x…", first_line(text))


def _failures(cells: list[CellResult]) -> list[dict]:
    """The unexpected failures, grouped: by the cause expectations.toml gives the test (the
    unpatched release fails it for that cause; an expected failure that passed names its cause),
    else by the exception and the first line of its message; the largest group first."""
    causes = expectations.load()
    by_id = {c.id: c for c in causes}
    groups: dict[tuple, dict] = {}

    def add(key: tuple, title: str, cell: CellResult, test: str, message: str) -> None:
        group = groups.setdefault(
            key, {"cause": key[1], "title": title, "message": message, "count": 0,
                  "tests": [], "cells": []},
        )  # fmt: skip
        group["count"] += 1
        group["tests"] += [test] if test and test not in group["tests"] else []
        group["cells"] += [cell.key] if cell.key not in group["cells"] else []

    for cell in cells:
        if cell.status == "obsolete":
            add(("obsolete", ""), LEGEND["obsolete"], cell, "", "")
            continue
        bad = [k for k in cell.cases or [] if k.outcome in ("failed", "xpass")]
        if cell.status == "failed" and not bad:  # it stopped before its tests, say
            reason = _message(cell.reason or "no tests ran")
            add(("no-results", "", reason), reason, cell, "", "")
        known_release = cell.version in RELEASES  # not the weekly `latest`
        expected = expectations.expected(causes, cell.version, "unpatched") if known_release else {}
        for case in bad:
            message = _message(case.message)
            if case.outcome == "xpass":
                known = [by_id[i] for i in expectations.cause_ids(case.message) if i in by_id]
                how = "passed, expected to fail:"
            else:
                known = expectations.causes_of(expected, case.point, case.name)
                how = "still fails:"
            if known:
                cause = known[0]
                add((case.outcome, cause.id), f"{how} [{cause.id}] {cause.reason}", cell,
                    case.id, message)  # fmt: skip
            else:
                add((case.outcome, "", message), message, cell, case.id, message)
    return sorted(groups.values(), key=lambda g: -g["count"])


def _causes(cells: list[CellResult]) -> list[dict]:
    """Each cause of expectations.toml with the cells whose expected failures it explains."""
    shown: dict[str, list[str]] = {}
    for cell in cells:
        for case in cell.cases or []:
            expected = case.outcome in ("bug", "absent")
            for cause in expectations.cause_ids(case.message) if expected else []:
                if cell.key not in shown.setdefault(cause, []):
                    shown[cause].append(cell.key)
    return [
        {
            "id": c.id,
            "kind": c.kind,
            "reason": c.reason,
            "commit": c.commit,
            "release": c.release,
            "affects": str(c.affects),
            "shown_in": shown.get(c.id, []),
        }
        for c in expectations.load()
    ]


def _cell_json(cell: CellResult) -> dict:
    cases = cell.cases or []
    return {
        "key": cell.key,
        "variant": cell.variant,
        "python": cell.python,
        "status": cell.status,
        "unexpected": cell.status in UNEXPECTED,
        "label": cell.label,
        "reason": cell.reason,
        "counts": dict(cell.counts),
        "cases": [
            {"id": c.id, "point": c.point, "outcome": c.outcome, "message": c.message}
            | ({"detail": c.detail[:4000]} if c.outcome in ("failed", "xpass") else {})
            for c in cases
        ],
    }


def columns(report: dict) -> list[tuple[str, str]]:
    return [(variant, py) for py in report["pythons"] for variant in ("unpatched", "patched")]


def find(release: dict, variant: str, python: str) -> dict | None:
    return next(
        (c for c in release["cells"] if (c["variant"], c["python"]) == (variant, python)), None
    )


def first_line(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
