"""The one reader of `compat_tests/expectations.toml`: which contract tests fail where, and why.

Used by the cells (`compat_tests/conftest.py`, which turns them into strict xfails) and by the
report (which groups failures by cause). Runs inside every cell, so Python 3.9 and `packaging`.
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from . import ROOT, MatrixError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

EXPECTATIONS = ROOT / "compat_tests" / "expectations.toml"
KINDS = {"bug": ("unpatched",), "absent": ("unpatched", "patched")}
ABSENT_RAISES = ("AttributeError", "ImportError")
KEYS = {"id", "reason", "commit", "release", "affects", "tests", "raises"}
SELECTOR = re.compile(r"\w+(::\w+(\[[^\]]+\])?)?")


@dataclass(frozen=True)
class Cause:
    id: str
    kind: str  # "bug" (unpatched cells only) or "absent" (both variants)
    reason: str
    commit: str
    release: str
    affects: SpecifierSet
    tests: tuple[str, ...]
    raises: tuple[str, ...] = ()

    def applies(self, version: str, variant: str) -> bool:
        return variant in KINDS[self.kind] and Version(version) in self.affects

    @property
    def text(self) -> str:
        """How the cause reads in an xfail reason; the report finds the id in the brackets."""
        return f"[{self.id}] {self.reason} ({self.commit}, v{self.release})"


def _cause(kind: str, entry: dict, where: str) -> Cause:
    unknown = set(entry) - KEYS
    if unknown & {"variant", "variants", "patched", "unpatched"}:
        raise MatrixError(
            f"{where}: a bug cannot name the patched variant; patched cells expect nothing "
            "(the series fixes every bug), only an [[absent]] API fails in both"
        )
    missing = {"id", "reason", "commit", "release", "affects", "tests"} - set(entry)
    if unknown or missing:
        raise MatrixError(f"{where}: unknown keys {sorted(unknown)}, missing {sorted(missing)}")
    try:
        affects, _ = SpecifierSet(entry["affects"]), Version(entry["release"])
    except (InvalidSpecifier, InvalidVersion) as exc:
        raise MatrixError(f"{where}: {exc}") from None
    bad = [t for t in entry["tests"] if not SELECTOR.fullmatch(t)]
    raises = tuple(entry.get("raises", ABSENT_RAISES if kind == "absent" else ()))
    if bad or not entry["tests"]:
        raise MatrixError(f"{where}: not a test selector: {bad or 'an empty list'}")
    if not re.fullmatch(r"[0-9a-f]{7,40}", entry["commit"]):
        raise MatrixError(f"{where}: commit {entry['commit']!r} is not a commit id")
    not_exceptions = [
        name for name in raises if not isinstance(getattr(builtins, name, None), type)
    ]
    if not_exceptions:
        raise MatrixError(f"{where}: raises names no builtin exception: {not_exceptions}")
    return Cause(entry["id"], kind, entry["reason"], entry["commit"], entry["release"],
                 affects, tuple(entry["tests"]), raises)  # fmt: skip


def _test_names(test_file: Path) -> set[str] | None:
    """The test functions a contract point's file defines; None when there is no such file."""
    if not test_file.is_file():
        return None
    tree = ast.parse(test_file.read_text(), str(test_file))
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _check_tests(cause: Cause, where: str, suite: Path) -> None:
    """Each selector names a contract point of `suite` and, if it names a test, one of its
    functions (parameters are checked by the cells, which collect them)."""
    for test in cause.tests:
        point, _, name = test.partition("::")
        names = _test_names(suite / f"test_{point}.py")
        if names is None:
            raise MatrixError(f"{where}: {test}: no contract point {point} (test_{point}.py)")
        if name and name.split("[")[0] not in names:
            raise MatrixError(f"{where}: {test}: test_{point}.py has no test {name.split('[')[0]}")


def load(path: Path = EXPECTATIONS, releases: list[str] | None = None) -> list[Cause]:
    """Every cause, checked: known keys, a valid range that names at least one of `releases`
    (when given), a commit, test selectors of the contract suite beside `path`, unique ids."""
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise MatrixError(f"{path.name}: {exc}") from None
    if set(data) - set(KINDS):
        raise MatrixError(f"{path.name}: unknown tables {sorted(set(data) - set(KINDS))}")
    causes = [
        _cause(kind, entry, f"{path.name} [[{kind}]] {entry.get('id', f'#{n}')}")
        for kind in KINDS
        for n, entry in enumerate(data.get(kind, []), 1)
    ]
    ids = [c.id for c in causes]
    if len(ids) != len(set(ids)):
        raise MatrixError(
            f"{path.name}: ids used twice: {sorted({i for i in ids if ids.count(i) > 1})}"
        )
    for cause in causes:
        _check_tests(cause, f"{path.name} [[{cause.kind}]] {cause.id}", path.parent)
        if releases is not None and not any(Version(v) in cause.affects for v in releases):
            raise MatrixError(
                f"{path.name} [[{cause.kind}]] {cause.id}: affects {cause.affects} names no "
                f"release of the matrix"
            )
    return causes


def expected(causes: list[Cause], version: str, variant: str) -> dict[str, list[Cause]]:
    """Selector -> the causes that make it fail in the cell of `version` and `variant`."""
    found: dict[str, list[Cause]] = {}
    for cause in causes:
        if cause.applies(version, variant):
            for selector in cause.tests:
                found.setdefault(selector, []).append(cause)
    return found


def causes_of(expected: dict[str, list[Cause]], point: str, name: str) -> list[Cause]:
    """The causes `expected` lists for one test, by any of the ways expectations.toml names it
    (as compat_tests/conftest.py matches them), the most specific first: `point::test[params]`,
    `point::test`, `point`."""
    selectors = (f"{point}::{name}", f"{point}::{name.split('[')[0]}", point)
    return list(dict.fromkeys(c for s in selectors for c in expected.get(s, [])))


def cause_ids(reason: str) -> list[str]:
    """The causes named in an xfail reason written by `Cause.text`."""
    return re.findall(r"\[([\w-]+)\]", reason)
