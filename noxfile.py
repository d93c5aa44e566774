#!/usr/bin/env -S uv run --script
# /// script
# dependencies = ["nox>=2025.2.9", "uv"]
# ///
"""Does the agent-release contract hold on each openai-agents release, unpatched and patched?

nox -s compat            every cell: release x variant x Python
nox -s compat -p 3.11    the whole matrix on one Python
nox -t sdk-0.5.1         one release, both variants
nox -s apply             only `git am` every series onto its release (no install)
"""

from __future__ import annotations

import glob
import os
import shutil
import sys
from pathlib import Path

import nox

sys.path.insert(0, os.path.dirname(__file__))
import sdk_matrix  # noqa: E402

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "uv"
nox.options.error_on_missing_interpreters = "CI" in os.environ

# The interpreters live under pyenv on our machines; uv must never try to download one.
os.environ["PATH"] = os.pathsep.join(
    [*sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin"))), os.environ["PATH"]]
)
os.environ["UV_PYTHON_DOWNLOADS"] = "never"

BUILD = Path("build/compat")
TREES = Path("build/trees")
SDISTS = Path(".nox/.cache/sdists")


def _cell_param(python: str, version: str, variant: str):
    return nox.param(
        python,
        version,
        variant,
        id=f"{version}-{variant}-py{python}",
        tags=[variant, f"sdk-{version}", f"py{python}"]
        + (["ci"] if sdk_matrix.in_ci(python, version) else []),
    )


def _install_sdk(session: nox.Session, version: str, variant: str) -> None:
    """Install `version` from its sdist tree, with its series applied if `patched`.

    Dependencies resolve as of the release's publish time, so later openai/pydantic
    releases cannot break old SDK releases.
    """
    tree = sdk_matrix.make_tree(version, Path(session.create_tmp()) / "sdk", SDISTS)
    applied = sdk_matrix.apply_series(version, tree) if variant == "patched" else []
    session.install(
        "--compile-bytecode",
        "--exclude-newer",
        sdk_matrix.release(version).published,
        str(tree),
        "-r",
        "compat_tests/requirements.txt",
    )
    session.log(f"series applied: {applied or 'none'}")


@nox.session
@nox.parametrize(("python", "sdk", "variant"), [_cell_param(*c) for c in sdk_matrix.cells()])
def compat(session: nox.Session, sdk: str, variant: str) -> None:
    """Run the contract suite against one release and variant."""
    try:
        _install_sdk(session, sdk, variant)
    except sdk_matrix.MatrixError as exc:
        session.error(str(exc))
    BUILD.mkdir(parents=True, exist_ok=True)
    junit = BUILD / f"junit-{sdk}-{variant}-py{session.python}.xml"
    session.run(
        "pytest",
        "compat_tests",
        f"--junitxml={junit}",
        *session.posargs,
        env={"COMPAT_VARIANT": variant},
    )


@nox.session(venv_backend="none")
def apply(session: nox.Session) -> None:
    """`git am` every series onto its release's sdist tree; nothing is installed."""
    for version in sdk_matrix.patched_versions():
        tree = Path(session.create_tmp()) / f"sdk-{version}"
        try:
            applied = sdk_matrix.apply_series(version, sdk_matrix.make_tree(version, tree, SDISTS))
        except sdk_matrix.MatrixError as exc:
            session.error(str(exc))
        session.log(f"{version}: {len(applied)} patches apply")


@nox.session(python="3.11", tags=["ci"])
def tests(session: nox.Session) -> None:
    """The kit's own tests: release list, series discovery, apply/export, expectations."""
    session.install("-r", "requirements-tools.txt", "pytest==8.3.5", "packaging")
    session.run("pytest", *session.posargs)


@nox.session(python="3.11", tags=["ci"])
def lint(session: nox.Session) -> None:
    """ruff over the kit (the patches are linted by each tag's own ruff in `upstream`)."""
    session.install("ruff==0.14.7")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


def _upstream_checks(session: nox.Session, tree: Path, label: str) -> dict[str, set[str]]:
    """Run the tag's own suite, ruff and mypy in `tree` with the tag's own uv.lock."""
    junit = tree.parent / f"upstream-{label}.xml"
    run = ["uv", "run", "--frozen", "--directory", str(tree)]
    session.run(
        *run,
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--junitxml={junit}",
        success_codes=[0, 1],
        silent=True,
    )
    ruff = session.run(
        *run,
        "ruff",
        "check",
        "--output-format=concise",
        "src",
        "tests",
        success_codes=[0, 1],
        silent=True,
    )
    mypy = session.run(*run, "mypy", "src", success_codes=[0, 1], silent=True)
    found = {
        "tests": sdk_matrix.junit_failures(junit),
        "ruff": {line for line in ruff.splitlines() if ": " in line},
        "mypy": {line for line in mypy.splitlines() if ": error:" in line},
    }
    session.log(
        f"{label}: {sdk_matrix.junit_counts(junit)}; ruff {len(found['ruff'])}, "
        f"mypy {len(found['mypy'])} findings"
    )
    return found


@nox.session(venv_backend="none", default=False)
def upstream(session: nox.Session) -> None:
    """Each patched release's own test suite, ruff and mypy (its own uv.lock), unpatched
    and patched: the series must add no failure. `-- <version>...` to limit."""
    new_failures = []
    for version in session.posargs or sdk_matrix.patched_versions():
        tree = Path(session.create_tmp()) / f"upstream-{version}"
        try:
            sdk_matrix.make_tree(version, tree, SDISTS)
        except sdk_matrix.MatrixError as exc:
            session.error(str(exc))
        env = {"UV_PROJECT_ENVIRONMENT": str(tree / ".venv"), "VIRTUAL_ENV": None}
        session.run(
            "uv",
            "sync",
            "--frozen",
            "--all-extras",
            "--python",
            "3.11",
            "--directory",
            str(tree),
            silent=True,
            env=env,
        )
        before = _upstream_checks(session, tree, f"{version}-unpatched")
        sdk_matrix.apply_series(version, tree)
        after = _upstream_checks(session, tree, f"{version}-patched")
        for kind in after:
            new_failures += [f"{version} {kind}: {x}" for x in sorted(after[kind] - before[kind])]
    if new_failures:
        session.error("the series add failures:\n" + "\n".join(new_failures))


def _version_arg(session: nox.Session) -> str:
    if len(session.posargs) != 1:
        session.error(
            f"usage: nox -s {session.name} -- <version>; known: {', '.join(sdk_matrix.RELEASES)}"
        )
    try:
        return sdk_matrix.release(session.posargs[0]).version
    except sdk_matrix.MatrixError as exc:
        session.error(str(exc))


@nox.session(venv_backend="none", default=False)
def tree(session: nox.Session) -> None:
    """Materialise `build/trees/<version>`: the sdist as a git tree with its series applied.

    Edit, commit, rebase there (branch `agent-release`, tag `base`), then `nox -s export`.
    """
    version = _version_arg(session)
    dest = TREES / version
    if dest.exists():
        session.error(f"{dest} exists; remove it or export it first")
    try:
        sdk_matrix.make_tree(version, dest, SDISTS)
        if version in sdk_matrix.patched_versions():
            sdk_matrix.apply_series(version, dest)
    except sdk_matrix.MatrixError as exc:
        shutil.rmtree(dest, ignore_errors=True)
        session.error(str(exc))
    session.log(f"{dest}: branch agent-release on tag base")


@nox.session(venv_backend="none", default=False)
def export(session: nox.Session) -> None:
    """Re-export `build/trees/<version>` into `patches/<version>/` (unedited format-patch)."""
    version = _version_arg(session)
    if not (TREES / version).is_dir():
        session.error(f"no tree for {version}; run: nox -s tree -- {version}")
    written = sdk_matrix.export_series(version, TREES / version, sdk_matrix.PATCHES / version)
    session.log(f"wrote {len(written)} patches to patches/{version}/")


if __name__ == "__main__":
    nox.main()
