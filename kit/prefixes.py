"""Bisectable series: the release with patches 0001..k applied, for every k, must fail no
contract test that the release itself passes (run without expectations, on CI_PYTHON)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

from . import ROOT, junit
from .envs import environment, uv, wheel
from .releases import CI_PYTHON
from .series import apply_series, git, make_tree


def failing(python: str, report: Path) -> set[str]:
    """The contract tests that fail in an environment, without expectations."""
    env = {**os.environ, "COMPAT_NO_EXPECTATIONS": "1", "COMPAT_VARIANT": "unpatched"}
    subprocess.run(
        [python, "-m", "pytest", "compat_tests", "-q", "-p", "no:randomly", f"--junitxml={report}"],
        cwd=ROOT, env=env, capture_output=True,
    )  # fmt: skip
    _, cases = junit.read(report)
    if not cases:
        raise RuntimeError(f"the contract suite did not run; see {report}")
    return {c.id for c in cases if c.outcome != "passed"}


def check(version: str, log: Callable[[str], None]) -> list[str]:
    """What each prefix of the release's series fails beyond what the release fails."""
    worse = []
    with tempfile.TemporaryDirectory() as tmp:
        name = f"prefixes-{version}-py{CI_PYTHON}"
        release_wheel, _ = wheel(version, "unpatched")
        env = environment(name, CI_PYTHON, version, "unpatched", sdk=release_wheel)
        baseline = failing(env["python"], Path(tmp) / "release.xml")
        log(f"{version}: the release fails {len(baseline)} contract tests")
        tree = make_tree(version, Path(tmp) / "tree")
        commits = apply_series(version, tree)
        for k, commit in enumerate(commits, 1):
            git(tree, "checkout", "-q", commit.split()[0])
            out = Path(tmp) / f"wheel-{k}"
            uv("build", "--quiet", "--wheel", "--out-dir", str(out), str(tree))
            (built,) = out.glob("*.whl")
            env = environment(name, CI_PYTHON, version, "unpatched", sdk=built)
            fails = failing(env["python"], Path(tmp) / f"prefix-{k}.xml")
            extra = sorted(fails - baseline)
            log(f"{version} 0001..{k:04d} ({commit}): fails {len(fails)}, {len(extra)} new")
            worse += [f"{version} with 0001..{k:04d}: {test}" for test in extra]
    return worse
