"""The one reader of pytest's JUnit files (junit_family=legacy): the cells' and upstream's."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

# How an outcome reads; also the order in which a cell's cases are listed.
WORDS = {
    "failed": "failed",
    "xpass": "unexpectedly passed",
    "bug": "bug shown",
    "absent": "API absent",
    "passed": "passed",
    "skipped": "skipped",
}


@dataclass
class Case:
    point: str  # the test file's stem minus `test_`
    name: str  # the test's name with its parameters; "" for a file that did not collect
    outcome: str  # a key of WORDS: bug is an expected failure, xpass one that passed (strict);
    # the report turns a bug whose causes are all [[absent]] into "absent"
    message: str = ""
    detail: str = ""

    @property
    def id(self) -> str:
        return f"{self.point}::{self.name}" if self.name else self.point


def read(path: Path) -> tuple[str, list[Case]]:
    """The suite's name and the cases of one JUnit file; one that cannot be read is a failure."""
    try:
        return parse(path)
    except (ET.ParseError, OSError) as exc:
        return "", [Case("junit", "", "failed", f"unreadable JUnit file {path}: {exc}")]


def parse(path: Path) -> tuple[str, list[Case]]:
    """As `read`, raising ET.ParseError or OSError for a file that cannot be read."""
    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    cases = []
    for tc in root.iter("testcase"):
        if not tc.get("name"):  # pytest's mark of a test interrupted before it reported: not run
            continue
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


def _outcome(case: ET.Element) -> str:
    """passed, failed (errors count as failed) or skipped: how upstream's suites are counted."""
    if case.find("failure") is not None or case.find("error") is not None:
        return "failed"
    return "skipped" if case.find("skipped") is not None else "passed"


def ids(path: Path, outcome: str) -> set[str]:
    """Ids (`classname::name`) of the tests with that outcome: how upstream's suites compare."""
    return {
        f"{case.get('classname')}::{case.get('name')}"
        for case in ET.parse(path).getroot().iter("testcase")
        if _outcome(case) == outcome
    }


def counts(path: Path) -> Counter:
    """passed / failed / skipped of a whole file."""
    return Counter(_outcome(case) for case in ET.parse(path).getroot().iter("testcase"))
