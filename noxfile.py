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
    tree, applied = sdk_matrix.variant_tree(
        version, variant, Path(session.create_tmp()) / "sdk", SDISTS
    )
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
    junit = BUILD / f"junit-{sdk}-{variant}-py{session.python}.xml"
    cov_json = BUILD / f"coverage-{sdk}-{variant}-py{session.python}.json"
    for earlier in (junit, cov_json):  # a cell that stops early must not show an old result
        earlier.unlink(missing_ok=True)
    try:
        _install_sdk(session, sdk, variant)
    except sdk_matrix.MatrixError as exc:
        session.error(str(exc))
    BUILD.mkdir(parents=True, exist_ok=True)
    coverage = os.environ.get("COMPAT_COVERAGE") == "1"  # for the report's patch coverage
    env = {
        "COMPAT_VARIANT": variant,
        "COVERAGE_FILE": f"{session.create_tmp()}/.coverage",
        "COVERAGE_RCFILE": "compat_tests/coverage.ini",
    }
    if coverage:
        session.install("coverage==7.8.0")
    try:
        session.run(
            *(["coverage", "run", "--source=agents", "-m"] if coverage else []),
            "pytest",
            "compat_tests",
            f"--junitxml={junit}",
            *session.posargs,
            env=env,
        )
    finally:
        if coverage:
            session.run("coverage", "json", "-q", "-o", str(cov_json), env=env)


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
    plugins = ("pytest", "pytest-repeat", "pytest-random-order")  # pinned as in the cells
    session.install(
        "-r", "requirements-tools.txt", "-c", "compat_tests/requirements.txt", *plugins, "packaging"
    )
    session.run("pytest", *session.posargs)


@nox.session(python="3.11", tags=["ci"])
def lint(session: nox.Session) -> None:
    """ruff over the kit (the patches are linted by each tag's own ruff in `upstream`)."""
    session.install("ruff==0.14.7", "check-jsonschema==0.39.0", "zizmor==1.32.0")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    workflows = sorted(glob.glob(".github/workflows/*.yml"))
    session.run("check-jsonschema", "--builtin-schema", "vendor.github-workflows", *workflows)
    session.run("zizmor", "--offline", ".github/workflows")


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
        # From 0.19 a test loads upstream's .github/scripts/, which the sdist does not ship:
        # one error in both counts, not an interrupted suite.
        "--continue-on-collection-errors",
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
        # Absolute: `uv --directory` resolves relative paths from inside the tree.
        tree = Path(session.create_tmp()).resolve() / f"upstream-{version}"
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


@nox.session(venv_backend="none", default=False)
def build(session: nox.Session) -> None:
    """One wheel per patched release in dist/, versioned `<version>+agentrelease.N`."""
    for version in session.posargs or sdk_matrix.patched_versions():
        tree = Path(session.create_tmp()) / f"build-{version}"
        try:
            sdk_matrix.apply_series(version, sdk_matrix.make_tree(version, tree, SDISTS))
        except sdk_matrix.MatrixError as exc:
            session.error(str(exc))
        sdk_matrix.set_local_version(tree, version)
        session.run("uv", "build", "--wheel", "--out-dir", "dist", str(tree), external=True)


def _version_arg(session: nox.Session, args: list[str] | None = None, usage: str = "") -> str:
    args = session.posargs if args is None else args
    if len(args) != 1:
        session.error(
            f"usage: nox -s {session.name} -- <version>{usage}; "
            f"known: {', '.join(sdk_matrix.RELEASES)}"
        )
    try:
        return sdk_matrix.release(args[0]).version
    except sdk_matrix.MatrixError as exc:
        session.error(str(exc))


@nox.session(venv_backend="none", default=False)
def tree(session: nox.Session) -> None:
    """Materialise `build/trees/<version>`: the sdist as a git tree with its series applied.

    Edit, commit, rebase there (branch `agent-release`, tag `base`), then `nox -s export`.
    `-- <version> --from <neighbour>` starts a new series from a neighbour's instead (`git am
    -3`); a conflict leaves the `git am` in progress there, to resolve and continue.
    """
    args = list(session.posargs)
    neighbour = None
    if "--from" in args:
        at = args.index("--from")
        neighbour = _version_arg(session, args[at + 1 : at + 2], " --from <version>")
        del args[at : at + 2]
    version = _version_arg(session, args, " [--from <version>]")
    dest = TREES / version
    if dest.exists():
        session.error(f"{dest} exists; remove it or export it first")
    try:
        sdk_matrix.make_tree(version, dest, SDISTS)
        if neighbour:
            sdk_matrix.derive_series(version, neighbour, dest, SDISTS)
        elif version in sdk_matrix.patched_versions():
            sdk_matrix.apply_series(version, dest)
    except sdk_matrix.MatrixError as exc:
        if not (dest / ".git" / "rebase-apply").is_dir():  # keep a conflict to resolve
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


BENCH_ENVS = Path(".nox/bench-envs")
BENCH_PYTHON = "3.11"


def _bench_env(session: nox.Session, version: str, variant: str, rebuild: bool) -> str:
    """The venv `.nox/bench-envs/<version>-<variant>`, installed as a compat cell is (with
    bytecode compiled, so imports are alike); returns its interpreter. Reused while its stamp
    (release, variant, the series' bytes, Python) is unchanged, unless `rebuild`."""
    import hashlib
    import json

    env = BENCH_ENVS / f"{version}-{variant}"
    python = env / "bin" / "python"
    patches = sdk_matrix.series(version) if variant == "patched" else []
    stamp = json.dumps(
        {
            "release": sdk_matrix.any_release(version).published,
            "variant": variant,
            "python": BENCH_PYTHON,
            "series": [hashlib.sha256(p.read_bytes()).hexdigest() for p in patches],
        }
    )
    stamp_file = env / "bench-stamp.json"
    if not rebuild and python.exists() and stamp_file.exists():
        if stamp_file.read_text() == stamp:
            session.log(f"{version}-{variant}: reused")
            return str(python)
    tree = Path(session.create_tmp()) / f"sdk-{version}-{variant}"
    tree, applied = sdk_matrix.variant_tree(version, variant, tree, SDISTS)
    session.run("uv", "venv", "--quiet", "--clear", "--python", BENCH_PYTHON, str(env))
    published = sdk_matrix.any_release(version).published
    install = ["--compile-bytecode", "--exclude-newer", published, str(tree)]
    session.run("uv", "pip", "install", "--quiet", "--python", str(env), *install)
    stamp_file.write_text(stamp)
    shutil.rmtree(tree)
    session.log(f"{version}-{variant}: series applied: {applied or 'none'}")
    return str(python)


@nox.session(venv_backend="none", default=False)
def bench(session: nox.Session) -> None:
    """What the fix costs, on Python 3.11: each patched release against itself unpatched, and
    upstream's own implementation (0.6.0, the fix, and the newest release) against 0.5.1, in
    rounds of fresh processes, the two sides of a pair back to back in alternating order; see
    bench/bench_agent_release.py for the method. 27 minutes on 2 cores, plus up to 13 to
    build the environments the first time.

    `-- --versions 0.5.1,0.6.0` to limit (0.6.0 and upstream-<newest> name upstream's pairs),
    `--rounds N`, `--json PATH` to write the figures, `--rebuild` to rebuild the environments.
    """
    import argparse
    import json
    import time

    from bench import bench_agent_release as script

    parser = argparse.ArgumentParser(prog="nox -s bench --")
    parser.add_argument("--versions", help="comma-separated pair ids (default: every pair)")
    parser.add_argument("--rounds", type=int, default=script.ROUNDS)
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument("--rebuild", action="store_true", help="rebuild every environment")
    args = parser.parse_args(session.posargs)

    started, cpu_started, load_before = time.monotonic(), os.times(), os.getloadavg()
    patched = sdk_matrix.patched_versions()
    pair_defs = script.pairs(
        patched, sdk_matrix.UPSTREAM_FIX.version, sdk_matrix.LAST_BEFORE_FIX, patched[-1]
    )
    chosen = args.versions.split(",") if args.versions else list(pair_defs)
    if set(chosen) - set(pair_defs):
        session.error(f"no pair for {args.versions}; known: {', '.join(pair_defs)}")
    try:
        envs = dict.fromkeys(
            pair_defs[k][side] for k in chosen for side in ("baseline", "candidate")
        )
        pythons = {env: _bench_env(session, *env, rebuild=args.rebuild) for env in envs}
    except sdk_matrix.MatrixError as exc:
        session.error(str(exc))
    envs_built = time.monotonic()
    try:
        results = script.run_rounds(pythons, pair_defs, chosen, args.rounds, session.log)
    except script.BenchError as exc:
        session.error(str(exc))

    wall, cpu = time.monotonic() - started, sum(os.times()[2:4]) - sum(cpu_started[2:4])
    python = results[chosen[0]]["rounds"]["baseline"][0]["python"]
    machine = (
        f"CPython {python} on {script.cpu_model()}, {os.cpu_count()} cores shared with other "
        f"work (load average {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after); "
        f"{args.rounds} rounds; {wall / 60:.0f} min wall "
        f"({(envs_built - started) / 60:.0f} min of it for the environments), "
        f"{cpu / 60:.0f} min CPU of the measuring processes"
    )
    text, out = script.summary(results, pair_defs, sdk_matrix.LAST_BEFORE_FIX, machine)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2) + "\n")
        session.log(f"wrote {args.json}")
    problems = script.leak_problems(results, pair_defs)
    if problems:
        session.error("the memory measurement is broken:\n" + "\n".join(problems))


# --- the report, CI's matrix, the weekly `latest` cell and the scan of every release ----------

import report as compat_report  # noqa: E402

SCAN = Path("build/scan")


@nox.session(venv_backend="none", default=False)
def report(session: nox.Session) -> None:
    """Render build/compat/junit-*.xml (+ coverage-*.json): report.md (also appended to
    $GITHUB_STEP_SUMMARY), report.html and report.json. Cells without a file show as not run."""
    data = compat_report.write_reports(BUILD)
    session.log(f"{BUILD}/report.html: {data['totals']}")


@nox.session(venv_backend="none", default=False)
def matrix(session: nox.Session) -> None:
    """Print CI's include list, from `nox --json -l -s compat`: every cell, or with
    `-- --changed <paths>` those a pull request needs; `--latest` adds the `latest` cell."""
    print(compat_report.matrix_include(session.posargs))


@nox.session(python=sdk_matrix.CI_PYTHON, default=False)
def latest(session: nox.Session) -> None:
    """The newest openai-agents on PyPI with today's dependencies, unpatched (weekly CI)."""
    session.install("--upgrade", "openai-agents", "-r", "compat_tests/requirements.txt")
    code = "import importlib.metadata as m; print(m.version('openai-agents'))"
    version = session.run("python", "-c", code, silent=True).strip()
    BUILD.mkdir(parents=True, exist_ok=True)
    session.run(
        "pytest",
        "compat_tests",
        f"--junitxml={BUILD}/junit-latest-unpatched-py{session.python}.xml",
        f"--override-ini=junit_suite_name=openai-agents {version}",
        *session.posargs,
        env={"COMPAT_VARIANT": "unpatched"},
    )


def _scan_release(session: nox.Session, release: dict) -> dict:
    """One release from PyPI on CI's Python, dependencies as of its upload, no expectations."""
    venv = Path(session.create_tmp()) / "scan-venv"  # one venv, cleared for each release
    python = str(venv / "bin" / "python")
    junit = SCAN / f"junit-{release['version']}.xml"
    junit.unlink(missing_ok=True)
    try:
        session.run("uv", "venv", "-q", "--clear", "--python", sdk_matrix.CI_PYTHON, str(venv))
        pip = ["uv", "pip", "install", "-q", "--python", python]
        session.run(*pip, "--exclude-newer", release["uploaded"], release["url"])
        session.run(*pip, "-r", "compat_tests/requirements.txt")  # may be newer than the release
    except nox.command.CommandFailed:
        return compat_report.scan_result(release, None, "cannot install")
    session.run(
        python,
        *("-m", "pytest", "compat_tests", "-q", "--continue-on-collection-errors"),
        f"--junitxml={junit}",
        env={"COMPAT_NO_EXPECTATIONS": "1", "COMPAT_VARIANT": "unpatched"},
        success_codes=range(6),
    )
    return compat_report.scan_result(release, junit)


@nox.session(venv_backend="none", default=False)
def scan(session: nox.Session) -> None:
    """Every release on PyPI, unpatched, without expectations: where each contract point holds.

    Results accumulate in build/scan/scan.json; `-- --force` re-runs them, `-- <version>...`
    runs only those. The table goes into README.md between the scan markers.
    """
    results = compat_report.load_scan(SCAN)
    only = [arg for arg in session.posargs if arg != "--force"]
    for release in compat_report.scan_releases(sdk_matrix.index_files()):
        if only and release["version"] not in only:
            continue
        junit = SCAN / f"junit-{release['version']}.xml"
        if release["version"] not in results or "--force" in session.posargs or only:
            results[release["version"]] = _scan_release(session, release)
        elif junit.exists():  # re-read: cheap, and the rules of scan_result may have changed
            results[release["version"]] = compat_report.scan_result(release, junit)
        compat_report.save_scan(SCAN, results)
    compat_report.update_readme(Path("README.md"), compat_report.render_scan(results))
    session.log(f"README.md: scan of {len(results)} releases")


if __name__ == "__main__":
    nox.main()
