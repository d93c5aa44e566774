"""What a cell runs in, built once and reused: the SDK's wheel per (release, variant, series
bytes), the pinned requirements per release, and a virtual environment per cell that is kept
while its stamp is unchanged.

Everything shared between cells is written through a unique temporary name and renamed into
place, so two `nox` streams (split by Python) can share the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import CACHE, ROOT, MatrixError, sdists
from .releases import Release, any_release, series_hash
from .series import apply_series, make_tree

WHEELS = CACHE / "wheels"
LOCKS = CACHE / "locks"
ENVS = ROOT / ".nox" / "cells"
REQUIREMENTS = ROOT / "compat_tests" / "requirements.txt"


def uv(*args: str) -> str:
    proc = subprocess.run(["uv", *args], capture_output=True, text=True)
    if proc.returncode:
        raise MatrixError(f"`uv {' '.join(args[:3])} ...` failed:\n{proc.stderr.strip()}")
    return proc.stdout


def interpreter(python: str) -> str | None:
    """The `pythonX.Y` on PATH (the noxfile puts pyenv's there), or None."""
    found = shutil.which(f"python{python}")
    return os.path.realpath(found) if found else None


def _publish(tmp: Path, final: Path) -> Path:
    """Move a finished `tmp` directory to `final`, unless another stream got there first."""
    try:
        os.rename(tmp, final)
    except OSError:
        if not final.is_dir():
            raise
        shutil.rmtree(tmp)
    return final


def wheel(version: str, variant: str) -> tuple[Path, list[str]]:
    """The SDK's wheel built from the release's sdist tree, with its series when `patched`,
    and the series' commits. Built once per (release, variant, series bytes)."""
    key = f"{version}-{variant}" + (f"-{series_hash(version)[:12]}" if variant == "patched" else "")
    final = WHEELS / key
    if not final.is_dir():
        WHEELS.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=WHEELS, prefix=f".{key}."))
        try:
            tree = make_tree(version, tmp / "tree")
            applied = apply_series(version, tree) if variant == "patched" else []
            uv("build", "--quiet", "--wheel", "--out-dir", str(tmp / "dist"), str(tree))
            (tmp / "dist" / "series.json").write_text(json.dumps(applied))
            shutil.rmtree(tree)
            _publish(tmp / "dist", final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    (built,) = final.glob("*.whl")
    return built, json.loads((final / "series.json").read_text())


def lock(rel: Release, requirements: Path | None = REQUIREMENTS) -> Path:
    """The release's dependencies (and `requirements`) pinned as of its publish time, for every
    Python it supports (`uv pip compile --universal`, markers where Pythons differ). The SDK
    itself is left out: cells install it from its wheel."""
    extra = requirements.read_text() if requirements else ""
    inputs = json.dumps([rel.version, rel.published, rel.min_python, extra])
    digest = hashlib.sha256(inputs.encode()).hexdigest()[:12]
    name = f"{rel.version}-{'cell' if requirements else 'sdk'}-{digest}.txt"
    final = LOCKS / name
    if not final.exists():
        spec = f"openai-agents=={rel.version}\n" + (f"-r {requirements}\n" if requirements else "")
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "in.txt").write_text(spec)
            uv(
                "pip",
                "compile",
                "--quiet",
                "--universal",
                "--no-header",
                "--no-annotate",
                "--python-version",
                rel.min_python,
                "--exclude-newer",
                rel.published,
                "--no-emit-package",
                "openai-agents",
                "-o",
                f"{tmp}/out.txt",
                f"{tmp}/in.txt",
            )
            sdists.write_atomically(final, (Path(tmp) / "out.txt").read_bytes())
    return final


def environment(
    name: str, python: str, version: str, variant: str, extra: tuple = (), sdk: Path | None = None
) -> dict:
    """The virtual environment `.nox/cells/<name>`, reused while its stamp (interpreter, SDK
    wheel, pinned requirements, `extra` packages) is unchanged; `sdk` replaces the variant's
    wheel. Nothing is compiled at install: the first run writes the bytecode of what it imports
    (kit.cells lets it). Returns its python, the series applied, and whether it was reused."""
    found = interpreter(python)
    if found is None:
        raise InterpreterNotFound(f"Python {python} is not available on this machine")
    built, applied = (sdk, []) if sdk else wheel(version, variant)
    pinned = lock(any_release(version))
    env = ENVS / name
    stamp = {"python": found, "wheel": str(built), "lock": pinned.name, "extra": list(extra)}
    stamp_file = env / "kit-stamp.json"
    reused = stamp_file.exists() and json.loads(stamp_file.read_text()) == stamp
    python_bin = str(env / "bin" / "python")
    if not reused:
        old = json.loads(stamp_file.read_text()) if stamp_file.exists() else {}
        if (old.get("python"), old.get("lock")) == (found, pinned.name):
            stamp_file.unlink()  # only the SDK or the extras changed: keep the rest
        else:
            stamp_file.unlink(missing_ok=True)
            uv("venv", "--quiet", "--clear", "--python", found, str(env))
            uv("pip", "install", "--quiet", "--no-deps", "--python", python_bin, "-r", str(pinned))
        uv("pip", "install", "--quiet", "--no-deps", "--reinstall-package", "openai-agents",
           "--python", python_bin, str(built), *extra)  # fmt: skip
        stamp_file.write_text(json.dumps(stamp))
    return {"python": python_bin, "series": applied, "reused": reused}


class InterpreterNotFound(MatrixError):
    """The cell's Python is not installed here (a skip locally, a failure in GitHub CI)."""
