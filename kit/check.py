"""Is my deployment affected? The contract suite against a team's own environment, with nothing
installed into it, and one verdict: each contract point holds, is broken (and why, from
compat_tests/expectations.toml) or does not apply, and what to install instead.

The environment is neither our unpatched nor our patched variant, so the suite runs without
expectations (as the scan does) and each failing test is classified here: listed by an [[absent]]
cause of that release (and failing with its exception) it does not apply; listed by a [[bug]]
cause it is broken by that cause; listed by none it is broken for an unknown cause.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from packaging.version import InvalidVersion, Version

from . import CACHE, ROOT, MatrixError, expectations, junit, safe
from .dist import local_version
from .envs import REQUIREMENTS, interpreter, uv
from .releases import CI_PYTHON, RELEASES, patched_versions, series
from .report import first_line

DEPS = CACHE / "check"  # the suite's test dependencies, a `--target` directory per Python
# Besides compat_tests/requirements.txt: conftest and kit.expectations read PEP 440 versions.
EXTRA = ("packaging",)
PROBE = (
    "import json, sys; from importlib.metadata import version; import agents; "
    "print(json.dumps([version('openai-agents'), '.'.join(map(str, sys.version_info[:3]))]))"
)
WORDS = {"holds": "holds", "broken": "broken", "n/a": "not applicable"}
SYMBOLS = {"holds": "✓", "broken": "✗", "n/a": "–"}


def resolve(python: str) -> str:
    """`3.10` (the machine's Python 3.10), or a path or command naming an interpreter."""
    found = interpreter(python) if re.fullmatch(r"\d+\.\d+", python) else shutil.which(python)
    if not found:
        raise MatrixError(f"no Python interpreter at {python}")
    return found


def throwaway(files: list[Path], base: str, tmp: Path) -> str:
    """A virtual environment in `tmp` with exactly what `files` pin: requirements or constraints
    files (their relative paths as pip reads them), uv.lock files, wheels."""
    inputs = []
    for n, path in enumerate(files):
        if not path.is_file():
            raise MatrixError(f"no such file: {path}")
        if path.name == "uv.lock":
            exported = tmp / f"uv-lock-{n}.txt"
            uv("export", "--quiet", "--directory", str(path.parent), "--frozen", "--no-hashes",
               "--no-dev", "--no-emit-project", "-o", str(exported))  # fmt: skip
            inputs += ["-r", str(exported)]
        else:
            inputs += [str(path)] if path.suffix == ".whl" else ["-r", str(path)]
    uv("venv", "--quiet", "--python", base, str(tmp / "venv"))
    python = str(tmp / "venv" / "bin" / "python")
    uv("pip", "install", "--quiet", "--python", python, *inputs)
    return python


def probe(python: str) -> tuple[str, str]:
    """The openai-agents release and the Python version of the interpreter, as it runs."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # nothing written into the env
    proc = subprocess.run([python, "-c", PROBE], env=env, capture_output=True, text=True)
    if proc.returncode:
        why = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise MatrixError(f"{python} cannot import agents: {why}")
    sdk, version = json.loads(proc.stdout.strip().splitlines()[-1])
    return sdk, version


def suite_deps(python: str, version: str) -> Path:
    """The suite's own dependencies for that Python, installed once beside, never into, it."""
    minor = ".".join(version.split(".")[:2])
    digest = hashlib.sha256(REQUIREMENTS.read_bytes() + repr(EXTRA).encode()).hexdigest()[:12]
    final = DEPS / f"py{minor}-{digest}"
    with safe.locked(DEPS, final.name):
        if final.is_dir():
            return final
        tmp = safe.scratch(DEPS, final.name)
        try:
            uv("pip", "install", "--quiet", "--python", python, "--target", str(tmp / "deps"),
               "-r", str(REQUIREMENTS), *EXTRA)  # fmt: skip
            os.rename(tmp / "deps", final)
        except MatrixError as exc:
            why = first_line(str(exc).splitlines()[-1])
            raise MatrixError(f"Python {version} cannot run pytest-asyncio: {why}") from None
        finally:
            safe.remove(tmp)
    return final


def run_suite(python: str, deps: Path, junit_file: Path, args: list[str]) -> list[junit.Case]:
    """The contract suite without expectations; the team's plugins and bytecode left alone.
    `deps` comes first on the path, so where the environment has a package of its own that the
    suite needs too (packaging; typing_extensions and exceptiongroup before Python 3.11), the
    suite's copy is the one imported."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(deps), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "COMPAT_NO_EXPECTATIONS": "1",
    }
    proc = subprocess.run(
        [python, "-m", "pytest", "compat_tests", "-q", "-p", "pytest_asyncio.plugin",
         "--continue-on-collection-errors", f"--junitxml={junit_file}", *args],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )  # fmt: skip
    if not junit_file.exists():
        why = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1]
        raise MatrixError(f"{python} cannot run the contract suite with pytest-asyncio: {why}")
    return junit.read(junit_file)[1]


def classify(cases: list[junit.Case], version: str) -> tuple[dict, dict]:
    """Each point's status, its tests by status, the [[bug]] causes it breaks by and the
    [[absent]] ones its n/a tests lack an API by; and those causes."""
    expected = expectations.expected(expectations.load(), version, "unpatched")
    points: dict[str, dict] = {}
    causes: dict[str, expectations.Cause] = {}
    for case in cases:
        point = points.setdefault(case.point, {"status": "n/a", "holds": [], "broken": [],
                                               "n/a": [], "causes": [], "absent": [],
                                               "unknown": []})  # fmt: skip
        found = expectations.causes_of(expected, case.point, case.name)
        raised = case.message.split(":")[0].split(".")[-1]
        absent = [c for c in found if c.kind == "absent" and raised in c.raises]
        bugs = [c for c in found if c.kind == "bug"]
        if case.outcome == "passed":
            status, why = "holds", []
        elif case.outcome == "skipped" or absent:
            status, why = "n/a", absent
        else:
            status, why = "broken", bugs
            if not bugs:
                point["unknown"].append({"test": case.id, "message": first_line(case.message)})
        point[status].append(case.id)
        for cause in why:
            causes[cause.id] = cause
            kind = "causes" if status == "broken" else "absent"
            point[kind] += [cause.id] if cause.id not in point[kind] else []
    for point in points.values():
        point["status"] = "broken" if point["broken"] else "holds" if point["holds"] else "n/a"
    return points, causes


def identify(sdk: str) -> dict:
    """The release, its minor line's row of the matrix, and whether it is one of our builds."""
    try:
        version = Version(sdk)
    except InvalidVersion:
        raise MatrixError(f"openai-agents {sdk!r} is not a PEP 440 version") from None
    oldest = next(iter(RELEASES))
    if version < Version(oldest):
        raise MatrixError(f"openai-agents {sdk} is older than any release the kit knows ({oldest})")
    row = next((r for v, r in RELEASES.items() if Version(v).release[:2] == version.release[:2]),
               None)  # fmt: skip
    label = re.fullmatch(r"agentrelease\.(\d+)", version.local or "")
    ours = bool(label and row and row.version == version.public and row.build)
    return {
        "sdk": sdk,
        "release": version.public,
        "line": row.version if row else None,
        "build": int(label[1]) if ours else None,
        "current_build": row.build if ours else None,
        "series_sha256": row.series_sha256 if ours and int(label[1]) == row.build else None,
    }


def wheel_text(version: str) -> str:
    return (
        f"`nox -s build -- {version}` writes dist/openai_agents-{local_version(version)}"
        f"-py3-none-any.whl and dist/constraints-{version}.txt (series patches/{version}/, "
        f'{len(series(version))} patches); README, "Install the patched SDK"'
    )


def remedy(sdk: dict) -> str:
    """What to install instead, for a release whose contract is broken."""
    line = sdk["line"]
    if line is None:
        newest = list(RELEASES)[-1]
        return f"no series covers the line of {sdk['release']}: the kit knows up to {newest}"
    if line not in patched_versions():
        return f"no series for {line}, the last release of its line, yet"
    if sdk["build"] is not None and sdk["build"] == sdk["current_build"]:
        return f"none yet: our newest build of {line}, whose series does not fix this yet"
    if sdk["build"] is not None:
        return f"install our current build {sdk['current_build']} of {line}: {wheel_text(line)}"
    if sdk["release"] == line:
        return f"install the patched wheel of {line}: {wheel_text(line)}"
    return (
        f"move to the line's last patch release, {line}, and install its wheel: {wheel_text(line)}"
    )


def check(python: str | None, requirements: list[Path] | None, pytest_args: list[str]) -> dict:
    """The verdict on the environment of `python`, or on a throwaway one with `requirements`;
    `pytest_args` (e.g. `-k`) select tests, and the verdict says so."""
    if not python and not requirements:
        raise MatrixError("nothing to check: give --python PATH or --requirements FILE")
    with tempfile.TemporaryDirectory() as tmp:
        if requirements:
            base = resolve(python) if python else interpreter(CI_PYTHON) or CI_PYTHON
            python = throwaway(requirements, base, Path(tmp))
        else:
            python = resolve(python)
        sdk, version = probe(python)
        found = identify(sdk)
        deps = suite_deps(python, version)
        cases = run_suite(python, deps, Path(tmp) / "junit.xml", pytest_args)
    points, causes = classify(cases, found["release"])
    broken = sorted(p for p, point in points.items() if point["status"] == "broken")
    holds = bool(points) and not broken
    return {
        **found,
        "python": version,
        "interpreter": python if not requirements else None,
        "holds": holds,
        "selected": " ".join(pytest_args) or None,
        "broken": broken,
        "points": points,
        "causes": {
            c.id: {
                "kind": c.kind,
                "reason": c.reason,
                "commit": c.commit,
                "release": c.release,
                "affects": str(c.affects),
            }
            for c in causes.values()
        },
        "remedy": None if holds else remedy(found),
    }


def _ids(causes: list[str]) -> str:
    return " ".join(f"[{c}]" for c in causes)


def render(verdict: dict) -> str:
    """The verdict for people."""
    if verdict["build"] is None:
        whose = "not one of our builds"
    else:
        whose = f"our build {verdict['build']} of patches/{verdict['line']}/"
        whose += (
            f" (series sha256 {verdict['series_sha256'][:12]})"
            if verdict["series_sha256"]
            else f", older than our current build {verdict['current_build']}"
        )
    where = f" ({verdict['interpreter']})" if verdict["interpreter"] else ""
    points = verdict["points"]
    counts = {s: sum(p["status"] == s for p in points.values()) for s in WORDS}
    state = "HOLDS" if verdict["holds"] else "BROKEN"
    state += f" (only the tests of `{verdict['selected']}`)" if verdict["selected"] else ""
    out = [
        f"openai-agents {verdict['sdk']} on Python {verdict['python']}{where}: {whose}",
        f"contract {state}: " + ", ".join(f"{n} {WORDS[s]}" for s, n in counts.items() if n),
    ]
    for name, point in sorted(points.items()):
        total = sum(len(point[s]) for s in WORDS)
        line = f"  {SYMBOLS[point['status']]} {name}: {WORDS[point['status']]}"
        if point["broken"]:
            unknown = " [unknown cause]" if point["unknown"] else ""
            line += f", {len(point['broken'])} of {total} tests {_ids(point['causes'])}{unknown}"
        if point["n/a"] and point["status"] != "n/a":
            line += f"; {len(point['n/a'])} of {total} tests not applicable"
        if point["n/a"]:
            line += f" {_ids(point['absent'])}" if point["absent"] else " (skipped)"
        out.append(line)
    if verdict["causes"]:
        out.append("causes:")
    for cid, cause in verdict["causes"].items():
        out.append(
            f"  [{cid}] {cause['reason']} (upstream {cause['commit']}, v{cause['release']}; "
            f"affects openai-agents {cause['affects']})"
        )
    unknown = [u for p in points.values() for u in p["unknown"]]
    if unknown:
        out.append("unknown cause (not in compat_tests/expectations.toml):")
    out += [f"  {u['test']}: {u['message']}" for u in unknown]
    if verdict["remedy"]:
        out.append(f"remedy: {verdict['remedy']}")
    return "\n".join(line.rstrip() for line in out)
