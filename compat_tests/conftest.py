"""Cell set-up for the contract suite: no network, no API key, no tracing, and the cell's
expected failures (kit/expectations.py reads compat_tests/expectations.toml) turned into strict
xfail marks."""

from __future__ import annotations

import builtins
import gc
import json
import os
import platform
import re
import socket
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.version import Version

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the kit, beside the tests
from kit import MatrixError, expectations, releases  # noqa: E402
from kit.safe import write_atomically  # noqa: E402

os.environ.pop("OPENAI_API_KEY", None)
os.environ["OPENAI_AGENTS_DISABLE_TRACING"] = "1"


def _no_network(*args, **kwargs):
    raise RuntimeError("the contract tests must not use the network")


socket.socket.connect = _no_network  # type: ignore[method-assign]
socket.socket.connect_ex = _no_network  # type: ignore[method-assign]
socket.getaddrinfo = _no_network  # type: ignore[assignment]
socket.create_connection = _no_network  # type: ignore[assignment]

from agents import set_tracing_disabled  # noqa: E402

set_tracing_disabled(True)

SDK = Version(version("openai-agents")).public  # a patched wheel may carry a local label
VARIANT = os.environ.get("COMPAT_VARIANT", "unpatched")


def pytest_report_header(config):
    deps = ", ".join(f"{d} {version(d)}" for d in ("openai", "pydantic"))
    return f"openai-agents {SDK} ({VARIANT}) on Python {platform.python_version()}; {deps}"


def _point(item: pytest.Item) -> str:
    return Path(str(item.fspath)).stem.removeprefix("test_")


def _test_id(item: pytest.Item) -> str:
    """`point::test[params]`, the same for each repeat of a test."""
    name = item.name
    if item.config.getoption("count", 1) > 1:  # pytest-repeat: `t[a-3-20]` is `t[a]`, `t[3-20]` `t`
        name = re.sub(r"(-|\[)\d+-\d+\]$", lambda m: "]" if m[1] == "-" else "", name)
    return f"{_point(item)}::{name}"


def _selectors(item: pytest.Item) -> set[str]:
    """`point`, `point::test` and `point::test[params]`: the ways expectations name tests."""
    point = _point(item)
    return {point, f"{point}::{getattr(item, 'originalname', item.name)}", _test_id(item)}


_TOLD: dict = {}


def _tell_the_cell(**found) -> None:
    """What kit.cells records of the run: how many tests it selected, or why it could not (told
    first, and kept: pytest finishes the collection after a usage error too)."""
    if os.environ.get("COMPAT_COLLECTED") and "error" not in _TOLD:
        _TOLD.update(found)
        write_atomically(Path(os.environ["COMPAT_COLLECTED"]), json.dumps(found).encode())


def pytest_collection_modifyitems(config, items):
    if os.environ.get("COMPAT_NO_EXPECTATIONS") == "1":  # `nox -s scan`: the plain outcomes
        return
    try:
        causes = expectations.load(
            Path(__file__).with_name("expectations.toml"), list(releases.RELEASES)
        )
    except MatrixError as exc:
        _tell_the_cell(error=str(exc))
        raise pytest.UsageError(str(exc)) from None
    selectors = {item: _selectors(item) for item in items}
    collected = set().union(*selectors.values())
    points = {s for s in collected if "::" not in s}
    unknown = sorted(
        f"{t} ({c.id})"
        for c in causes
        for t in c.tests
        if t.split("::")[0] in points and t not in collected
    )
    if unknown and not config.option.keyword and not config.option.markexpr:
        message = f"expectations.toml names tests that do not exist: {', '.join(unknown)}"
        _tell_the_cell(error=message)
        raise pytest.UsageError(message)
    expected = expectations.expected(causes, SDK, VARIANT)
    for item in items:
        found = list(dict.fromkeys(c for s in selectors[item] for c in expected.get(s, [])))
        if found:
            raises = [getattr(builtins, name) for c in found for name in c.raises]
            item.add_marker(
                pytest.mark.xfail(
                    strict=True,
                    reason=" + ".join(c.text for c in found),
                    raises=tuple(raises) if all(c.raises for c in found) else None,
                )
            )


def pytest_collection_finish(session):
    # After -k, -m, --deselect and pytest-repeat: a run selecting fewer tests is partial.
    _tell_the_cell(tests=len({_test_id(i) for i in session.items}), items=len(session.items))
    # Move everything imported so far out of the collector's sight: full collections in the
    # tests then take microseconds instead of a tenth of a second each.
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _failure_expected(request):
    """Tell support.py (once a test module has imported it) whether this test is an expected
    failure: it then skips the costly part of its failure messages."""
    support = sys.modules.get("support")
    if support is None:
        yield
        return
    support.FAILURE_EXPECTED = request.node.get_closest_marker("xfail") is not None
    yield
    support.FAILURE_EXPECTED = False


@pytest.fixture(autouse=True)
def _clean_gc_state():
    """Every test starts with no garbage from earlier tests and with the collector on."""
    gc.enable()
    gc.collect()
    yield
    gc.enable()
