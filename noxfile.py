#!/usr/bin/env -S uv run --script
# /// script
# dependencies = ["nox==2026.10.20", "uv==0.13.9"]
# ///
"""Does the agent-release contract hold on each openai-agents release, unpatched and patched?

Every session is a few lines over the package kit/; `nox -l` lists them.
"""

from __future__ import annotations

import argparse
import functools
import glob
import json
import os
import signal
import sys
from pathlib import Path

import nox

sys.path.insert(0, os.path.dirname(__file__))
import kit  # noqa: E402
from kit import MatrixError  # noqa: E402

try:  # kit.releases reads releases.toml and patches/ on import: a problem there is one line
    from kit import cells, ci, dist, docs, intake, releases, render, series  # noqa: E402
    from kit import check as deployment  # noqa: E402
    from kit import prefixes as bisect  # noqa: E402
    from kit import scan as release_scan  # noqa: E402
    from kit import timing as matrix_timing  # noqa: E402
    from kit import upstream as own_suites  # noqa: E402
    from kit.envs import InterpreterNotFound  # noqa: E402

    MATRIX = releases.cells()
except MatrixError as exc:
    print(f"nox > {exc}", file=sys.stderr)
    sys.exit(2)  # as nox exits for a noxfile it cannot load

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "uv"

# The interpreters live under pyenv on our machines; uv must never try to download one.
os.environ["PATH"] = os.pathsep.join(
    [*sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin"))), os.environ["PATH"]]
)
os.environ["UV_PYTHON_DOWNLOADS"] = "never"

# `kill` stops a session as Ctrl-C does: nox stops its command, and the kit removes its
# temporaries and kills the git and uv it started (kit.safe.run).
signal.signal(signal.SIGTERM, signal.default_int_handler)


def kit_session(**kwargs):
    """`nox.session`, with the kit's MatrixError (bad input, no network, a series that does not
    apply) reported as a clean session error instead of a traceback."""

    def decorate(func):
        @functools.wraps(func)
        def run(session: nox.Session, **params):
            try:
                return func(session, **params)
            except MatrixError as exc:
                session.error(str(exc))

        return nox.session(**{"venv_backend": "none", "default": False, **kwargs})(run)

    return decorate


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise MatrixError(f"{self.format_usage().strip()}: {message}")


def parse(session: nox.Session, *arguments: tuple[str, dict]) -> argparse.Namespace:
    """The session's `-- ...` arguments, one (name, add_argument options) pair each."""
    parser = _Parser(prog=f"nox -s {session.name.split('(')[0]} --", add_help=False)
    for name, options in arguments:
        parser.add_argument(name, **options)
    return parser.parse_args(session.posargs)


VERSIONS = ("versions", {"nargs": "*", "metavar": "version", "default": None})
VERSION = ("version", {})
NEIGHBOUR = ("--from", {"dest": "neighbour", "metavar": "version"})
CHECK = ("--check", {"action": "store_true"})
FLAG = {"action": "store_true"}
FORCE = ("--force", FLAG)


def _progress(session: nox.Session) -> str:
    manifest = session._runner.manifest  # nox has no public view of its queue
    done = sum(s.name == "compat" for s in manifest._consumed)
    return cells.progress(done, done + sum(s.name == "compat" for s in manifest._queue))


def _param(cell: releases.Cell):
    tags = [cell.variant, f"sdk-{cell.version}", f"py{cell.python}"]
    tags += ["smoke"] if releases.smoke(cell) else []
    return nox.param(cell.python, cell.version, cell.variant, id=cell.key, tags=tags)


@kit_session(default=True)
@nox.parametrize(("python", "sdk", "variant"), [_param(c) for c in MATRIX])
def compat(session: nox.Session, sdk: str, variant: str) -> None:
    """The contract suite against one release and variant on one Python (the matrix)."""
    session.log(_progress(session))
    cell = releases.Cell(session.python, sdk, variant)
    try:
        cells.run(cell, session.posargs, session.run, session.log)
    except InterpreterNotFound as exc:
        (session.error if cells.REQUIRE_PYTHONS else session.skip)(str(exc))


@kit_session()
def report(session: nox.Session) -> None:
    """build/compat/report.{md,html,json} from what the cells wrote; unrun cells say so."""
    session.log(render.summary_line(render.write_reports()))


@kit_session()
def matrix(session: nox.Session) -> None:
    """CI's jobs as JSON; `-- --changed <path>...` for a pull request, `--latest` weekly."""
    args = parse(session, ("--changed", {"nargs": "*"}), ("--latest", FLAG))
    print(json.dumps(ci.include(args.changed, args.latest)))


@kit_session()
def prefixes(session: nox.Session) -> None:
    """Every prefix 0001..k of a series must fail no contract test its release passes."""
    worse = []
    for version in parse(session, VERSIONS).versions or releases.patched_versions():
        worse += bisect.check(releases.release(version).version, session.log)
    if worse:
        session.error("prefixes worse than their release:\n" + "\n".join(worse))


@kit_session()
def apply(session: nox.Session) -> None:
    """`git am` each series onto its release's sdist tree; reports every one that fails."""
    failures = []
    for version in parse(session, VERSIONS).versions or releases.patched_versions():
        try:
            tree = series.make_tree(releases.release(version).version, _tmp(session, version))
            session.log(f"{version}: {len(series.apply_series(version, tree))} patches apply")
        except MatrixError as exc:
            failures.append(str(exc))
    if failures:
        session.error("\n".join(failures))


@nox.session(python=releases.CI_PYTHON, tags=["kit"])
def tests(session: nox.Session) -> None:
    """The kit's own tests."""
    plugins = ("pytest", "pytest-repeat", "pytest-random-order", "packaging")  # as in the cells
    session.install("-r", "requirements-tools.txt", "-c", "compat_tests/requirements.txt", *plugins)
    session.run("pytest", *session.posargs)


@nox.session(python=releases.CI_PYTHON, tags=["kit"])
def lint(session: nox.Session) -> None:
    """ruff over the kit, and the workflows (the patches are linted by `upstream`)."""
    session.install("ruff==0.14.7", "check-jsonschema==0.39.0", "zizmor==1.32.0")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    workflows = sorted(glob.glob(".github/workflows/*.yml"))
    session.run("check-jsonschema", "--builtin-schema", "vendor.github-workflows", *workflows)
    session.run("zizmor", "--offline", ".github/workflows")


@kit_session()
def upstream(session: nox.Session) -> None:
    """Each release's own suite, ruff and mypy, unpatched then patched; `-- --publish` writes
    docs/upstream.md."""
    args = parse(session, VERSIONS, CHECK, ("--publish", FLAG))
    if args.check:
        docs.check("upstream", own_suites.render, "upstream -- --publish")
        if stale := own_suites.stale(docs.load("upstream")):
            session.error("docs/upstream.md: re-run `nox -s upstream -- <version> --publish`:\n"
                          + "\n".join(stale))  # fmt: skip
        return
    data, added, lines = docs.load("upstream") or {"releases": {}}, [], []
    versions = args.versions or releases.patched_versions()
    for n, version in enumerate(versions, 1):
        session.log(f"[{n}/{len(versions)}] {version}")
        entry = own_suites.check_release(version, _tmp(session, ""), session.log)
        lines.append(own_suites.summary(version, entry))
        session.log(lines[-1])
        data["releases"] = docs.merged(data["releases"], version, entry)
        if args.publish:
            docs.publish("upstream", data, own_suites.render)
        added += [f"{version} {line}" for line in entry["added"]]
    print("\n".join(lines))
    if added:
        session.error("the series add failures:\n" + "\n".join(added))


@kit_session()
def build(session: nox.Session) -> None:
    """dist/: per series its wheel, constraints-<version>.txt, and a find-links index.html."""
    for version in parse(session, VERSIONS).versions or releases.patched_versions():
        for path in dist.build(releases.release(version).version):
            session.log(f"wrote {path.relative_to(kit.ROOT)}")
    session.log(f"wrote {dist.index_page().relative_to(kit.ROOT)}")


@kit_session()
def tree(session: nox.Session) -> None:
    """build/trees/<version>: the sdist as git with its series, to edit; `--from` a neighbour's."""
    args = parse(session, VERSION, NEIGHBOUR)
    dest = intake.work_tree(releases.release(args.version).version, args.neighbour)
    session.log(f"{dest}: branch agent-release on tag base; edit, commit, then `export`")


@kit_session()
def export(session: nox.Session) -> None:
    """patches/<version>/ from build/trees/<version>, its README, its build number."""
    args = parse(session, VERSION, FORCE)
    version = releases.release(args.version).version
    if not (intake.TREES / version).is_dir():
        session.error(f"no tree for {version}; run: nox -s tree -- {version}")
    written, rel = intake.export(version, intake.TREES / version, args.force)
    session.log(f"wrote {len(written)} patches to patches/{version}/ (build {rel.build})")


@kit_session(name="add-release")
def add_release(session: nox.Session) -> None:
    """Take in a release: its row, its series from a neighbour's, its Python 3.11 cells."""
    args = parse(session, ("version", {"help": "or `newest`: PyPI's, if new"}), NEIGHBOUR, FORCE)
    version = intake.newest_on_pypi() if args.version == "newest" else args.version
    if version is None:
        return session.log(f"PyPI has no release newer than {list(releases.RELEASES)[-1]}")
    notes, failed = intake.take_in(version, args.neighbour, args.force, session.run, session.log)
    session.log("To review before committing:\n- " + "\n- ".join(notes))
    if failed:
        session.error(f"cells failed: {', '.join(failed)}")


@kit_session()
def bench(session: nox.Session) -> None:
    """What the fix costs, pair by pair, in rounds of fresh processes (docs/bench.md)."""
    from bench import driver  # only this session needs it

    args = parse(
        session,
        ("--versions", {"default": ""}),
        ("--rounds", {"type": int, "default": driver.ROUNDS}),
        ("--rebuild", FLAG),
        ("--publish", FLAG),
        CHECK,
    )
    if args.check:
        return docs.check("bench", driver.render, "bench -- --publish")
    chosen = args.versions.split(",") if args.versions else None
    data = driver.run(chosen, args.rounds, args.rebuild, session.log)
    print(driver.render(data), end="")
    if args.publish:
        docs.publish("bench", data, driver.render)
    problems = driver.leak_problems(data)
    if problems:
        session.error("the memory measurement is broken:\n" + "\n".join(problems))


@kit_session(python=releases.CI_PYTHON, venv_backend="uv")
def latest(session: nox.Session) -> None:
    """The newest openai-agents on PyPI with today's dependencies, unpatched (weekly CI)."""
    session.install("--upgrade", "openai-agents", "-r", "compat_tests/requirements.txt")
    code = "import importlib.metadata as m; print(m.version('openai-agents'))"
    version = session.run("python", "-c", code, silent=True).strip()
    session.run(
        *("pytest", "compat_tests", f"--override-ini=junit_suite_name=openai-agents {version}"),
        f"--junitxml=build/compat/junit-latest-unpatched-py{session.python}.xml",
        *session.posargs,
        env={"COMPAT_VARIANT": "unpatched"},
    )


@kit_session()
def check(session: nox.Session) -> None:
    """Is my deployment affected? The contract in `--python PATH`'s environment, or in a throwaway
    one with `--requirements FILE...` (requirements, constraints, uv.lock, wheels); `--json`;
    pytest's arguments after a second `--`."""
    args = parse(
        session,
        ("--python", {"metavar": "PATH"}),
        ("--requirements", {"nargs": "+", "type": Path, "metavar": "FILE"}),
        ("--json", FLAG),
        ("pytest_args", {"nargs": argparse.REMAINDER}),
    )
    selection = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    verdict = deployment.check(args.python, args.requirements, selection)
    print(json.dumps(verdict, indent=1) if args.json else deployment.render(verdict))
    if not verdict["holds"]:
        session.error(f"the contract is broken: {', '.join(verdict['broken']) or 'no test ran'}")


@kit_session()
def scan(session: nox.Session) -> None:
    """Every release on PyPI, unpatched, no expectations: where each point holds (docs/scan.md)."""
    args = parse(session, VERSIONS, FORCE, CHECK)
    if args.check:
        return docs.check("scan", release_scan.render, "scan")
    release_scan.update(args.versions, args.force, session.log)


@kit_session()
def timing(session: nox.Session) -> None:
    """How long a slice takes (docs/matrix-time.md); its nox arguments after a second `--`."""
    args = parse(
        session,
        ("--streams", {"type": int, "default": 1}),
        ("--publish", {"metavar": "label"}),
        CHECK,
        ("nox_args", {"nargs": argparse.REMAINDER}),
    )
    if args.check:
        return docs.check("matrix-time", matrix_timing.render, "timing")
    slice_ = args.nox_args[1:] if args.nox_args[:1] == ["--"] else args.nox_args
    run = matrix_timing.measure(slice_ or ["-s", "compat", "-p", releases.CI_PYTHON], args.streams)
    session.log(matrix_timing.summary(run))
    if args.publish:
        data = docs.load("matrix-time") or {"runs": {}}
        data["runs"][args.publish] = run
        docs.publish("matrix-time", data, matrix_timing.render)


def _tmp(session: nox.Session, name: str) -> Path:
    return Path(session.create_tmp()).resolve() / name


if __name__ == "__main__":
    nox.main()
