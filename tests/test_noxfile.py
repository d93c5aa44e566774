"""The noxfile's own failure modes, run for real by nox in a subprocess on a copy of the kit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SDISTS = ROOT / ".nox" / ".cache" / "sdists"


def nox(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    environ = {k: v for k, v in os.environ.items() if k not in ("CI", "PATH")}
    return subprocess.run(
        [sys.executable, "-m", "nox", *args],
        cwd=cwd,
        env={**environ, "PATH": path, **env},
        capture_output=True,
        text=True,
    )


def kit_copy(tmp_path: Path) -> Path:
    kit = tmp_path / "kit"
    kit.mkdir()
    for name in ("noxfile.py", "sdk_matrix.py", "report.py"):
        shutil.copy(ROOT / name, kit)
    for name in ("compat_tests", "patches"):
        shutil.copytree(ROOT / name, kit / name)
    SDISTS.mkdir(parents=True, exist_ok=True)
    (kit / ".nox" / ".cache").mkdir(parents=True)
    (kit / ".nox" / ".cache" / "sdists").symlink_to(SDISTS)
    return kit


def test_a_missing_interpreter_is_a_skip_locally_and_an_error_in_ci(tmp_path: Path):
    kit = kit_copy(tmp_path)
    home = tmp_path / "home"  # no ~/.pyenv: no Python 3.9 anywhere
    home.mkdir()
    cell = "compat(0.5.1-unpatched-py3.9)"
    local = nox(kit, "-s", cell, HOME=str(home))
    assert local.returncode == 0, local.stderr
    assert f"Session {cell} skipped: Python interpreter 3.9 not found" in local.stderr
    ci = nox(kit, "-s", cell, HOME=str(home), CI="true")
    assert ci.returncode == 1
    assert f"Session {cell} failed: Python interpreter 3.9 not found" in ci.stderr


def test_a_series_that_does_not_apply_names_its_patch_and_leaves_no_old_result(tmp_path: Path):
    kit = kit_copy(tmp_path)
    first = sorted((kit / "patches" / "0.5.1").glob("*.patch"))[0]
    text = first.read_text()
    context = next(line for line in text.split("\n@@ ", 1)[1].splitlines()[1:] if line[:1] == " ")
    first.write_text(text.replace(context, context + "  # changed upstream", 1))
    old_result = kit / "build" / "compat" / "junit-0.5.1-patched-py3.11.xml"
    old_result.parent.mkdir(parents=True)
    old_result.write_text('<testsuites><testsuite name="pytest" tests="1"/></testsuites>')

    proc = nox(kit, "-s", "compat(0.5.1-patched-py3.11)")
    assert proc.returncode == 1
    assert f"patches/0.5.1/{first.name} does not apply to 0.5.1: patch failed: src/" in proc.stderr
    assert not old_result.exists()
