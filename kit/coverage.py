"""Patch coverage: the share of the lines each series adds under `src/` that the patched cells
run (`COMPAT_COVERAGE=1`), and the lines they miss."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from . import PATCHES
from .releases import patched_versions, series

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


def patch_coverage(version: str, build: Path, patches: Path = PATCHES) -> dict | None:
    """Share of the series' added executable lines that the patched cells ran (all Pythons)."""
    runs = sorted(build.glob(f"coverage-{version}-patched-py*.json"))
    if not runs or version not in patched_versions(patches):
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
    added = added_lines(series(version, patches))
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
