"""What a cell runs in, built once and reused: the SDK's wheel per (release, variant, series
bytes), the pinned requirements per release, and a virtual environment per cell that is kept
while its stamp is unchanged and its installed files are whole.

Each is built by one stream at a time (a lock per entry) in a temporary place and moved into
place when complete, with its sha256 recorded beside it; an entry whose bytes no longer match
is built again. So two `nox` streams (split by Python) can share the cache, and an interrupt
leaves nothing that is trusted later.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from . import CACHE, ROOT, MatrixError, safe
from .releases import Release, any_release, series_hash
from .series import apply_series, make_tree

WHEELS = CACHE / "wheels"
LOCKS = CACHE / "locks"
ENVS = ROOT / ".nox" / "cells"
REQUIREMENTS = ROOT / "compat_tests" / "requirements.txt"


def uv(*args: str) -> str:
    proc = safe.run(["uv", *args])
    if proc.returncode:
        raise MatrixError(f"`uv {' '.join(args[:3])} ...` failed:\n{proc.stderr.strip()}")
    return proc.stdout


def interpreter(python: str) -> str | None:
    """The `pythonX.Y` on PATH (the noxfile puts pyenv's there), or None."""
    found = shutil.which(f"python{python}")
    return os.path.realpath(found) if found else None


def _read_json(path: Path):
    """A record the kit wrote, or None when it is missing or unreadable (then it is rebuilt)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _cached_wheel(entry: Path) -> tuple[Path, list[str]] | None:
    """The wheel in a cache entry and the series it was built with, if the entry is whole."""
    wheels = list(entry.glob("*.whl"))
    applied = _read_json(entry / "series.json")
    if len(wheels) != 1 or not safe.intact(wheels[0]) or not isinstance(applied, list):
        return None
    return wheels[0], applied


def wheel(version: str, variant: str) -> tuple[Path, list[str]]:
    """The SDK's wheel built from the release's sdist tree, with its series when `patched`,
    and the series' commits. Built once per (release, variant, series bytes)."""
    key = f"{version}-{variant}" + (f"-{series_hash(version)[:12]}" if variant == "patched" else "")
    final = WHEELS / key
    cached = _cached_wheel(final)
    if cached:
        return cached
    with safe.locked(WHEELS, key):
        cached = _cached_wheel(final)
        if cached:  # another stream built it meanwhile
            return cached
        tmp = safe.scratch(WHEELS, key)
        try:
            tree = make_tree(version, tmp / "tree")
            applied = apply_series(version, tree) if variant == "patched" else []
            uv("build", "--quiet", "--wheel", "--out-dir", str(tmp / "dist"), str(tree))
            (built,) = (tmp / "dist").glob("*.whl")
            safe.write_recorded(built, built.read_bytes())
            (tmp / "dist" / "series.json").write_text(json.dumps(applied))
            safe.remove(final)
            os.rename(tmp / "dist", final)
        finally:
            safe.remove(tmp)
    return final / built.name, applied


def lock(rel: Release, requirements: Path | None = REQUIREMENTS) -> Path:
    """The release's dependencies (and `requirements`) pinned as of its publish time, for every
    Python it supports (`uv pip compile --universal`, markers where Pythons differ). The SDK
    itself is left out: cells install it from its wheel."""
    extra = requirements.read_text() if requirements else ""
    inputs = json.dumps([rel.version, rel.published, rel.min_python, extra])
    digest = hashlib.sha256(inputs.encode()).hexdigest()[:12]
    name = f"{rel.version}-{'cell' if requirements else 'sdk'}-{digest}.txt"
    final = LOCKS / name
    if safe.intact(final):
        return final
    with safe.locked(LOCKS, name), tempfile.TemporaryDirectory() as tmp:
        if safe.intact(final):
            return final
        spec = f"openai-agents=={rel.version}\n" + (f"-r {requirements}\n" if requirements else "")
        (Path(tmp) / "in.txt").write_text(spec)
        try:
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
        except MatrixError as exc:
            if final.exists():
                raise MatrixError(f"{final} does not match its recorded sha256; {exc}") from None
            raise
        safe.write_recorded(final, (Path(tmp) / "out.txt").read_bytes())
    return final


def _site_packages(env: Path) -> Path | None:
    return next(env.glob("lib/python*/site-packages"), None)


def _installed(env: Path) -> list[str] | None:
    """The distributions installed in `env` (their .dist-info names), or None when a file of
    theirs is missing or has another size than its RECORD says: a check of a few milliseconds
    that a kept environment is whole."""
    site = _site_packages(env)
    if site is None or not (env / "bin" / "python").exists():
        return None
    found = sorted(record.parent.name for record in site.glob("*.dist-info/RECORD"))
    for name in found:
        with open(site / name / "RECORD", newline="") as rows:
            for row in csv.reader(rows):
                try:
                    if row[2] and os.stat(site / row[0]).st_size != int(row[2]):
                        return None
                except (IndexError, ValueError, OSError):
                    return None
    return found


def environment(
    name: str, python: str, version: str, variant: str, extra: tuple = (), sdk: Path | None = None
) -> dict:
    """The virtual environment `.nox/cells/<name>`, reused while its stamp (interpreter, SDK
    wheel, pinned requirements, `extra` packages, each by hash) is unchanged and the files of
    what it installed are there; `sdk` replaces the variant's wheel. Nothing is compiled at
    install: the first run writes the bytecode of what it imports (kit.cells lets it). Returns
    its python, the series applied, and whether it was reused."""
    found = interpreter(python)
    if found is None:
        raise InterpreterNotFound(f"Python {python} is not available on this machine")
    built, applied = (sdk, []) if sdk else wheel(version, variant)
    pinned = lock(any_release(version))
    env = ENVS / name
    inputs = {
        "python": found,
        "wheel": str(built),
        "wheel_sha256": safe.sha256(built),
        "lock": pinned.name,
        "lock_sha256": safe.sha256(pinned),
        "extra": list(extra),
    }
    stamp_file = env / "kit-stamp.json"
    python_bin = str(env / "bin" / "python")
    with safe.locked(ENVS, name):
        old = _read_json(stamp_file)
        old = old if isinstance(old, dict) and old.get("installed") == _installed(env) else {}
        reused = old.get("inputs") == inputs
        if not reused:
            stamp_file.unlink(missing_ok=True)
            kept = old.get("inputs", {})
            if (kept.get("python"), kept.get("lock_sha256")) != (found, inputs["lock_sha256"]):
                uv("venv", "--quiet", "--clear", "--python", found, str(env))
                uv("pip", "install", "--quiet", "--no-deps", "--python", python_bin, "-r",
                   str(pinned))  # fmt: skip
            # else only the SDK or the extras changed: keep the rest
            uv("pip", "install", "--quiet", "--no-deps", "--reinstall-package", "openai-agents",
               "--python", python_bin, str(built), *extra)  # fmt: skip
            stamp = {"inputs": inputs, "installed": _installed(env)}
            safe.write_atomically(stamp_file, json.dumps(stamp).encode())
    return {"python": python_bin, "series": applied, "reused": reused}


class InterpreterNotFound(MatrixError):
    """The cell's Python is not installed here (a skip locally, a failure in GitHub CI)."""
