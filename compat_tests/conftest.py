"""Cell set-up for the contract suite: no network, no API key, no tracing, and the cell's
expected failures (from expectations.toml) turned into strict xfail marks."""

from __future__ import annotations

import gc
import os
import platform
import re
import socket
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

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

SDK = version("openai-agents")
VARIANT = os.environ.get("COMPAT_VARIANT", "unpatched")
EXPECTATIONS = Path(__file__).with_name("expectations.toml")


def pytest_report_header(config):
    deps = ", ".join(f"{d} {version(d)}" for d in ("openai", "pydantic"))
    return f"openai-agents {SDK} ({VARIANT}) on Python {platform.python_version()}; {deps}"


def _selectors(item: pytest.Item) -> set[str]:
    """`point`, `point::test` and `point::test[params]`: the ways expectations name tests."""
    point = Path(str(item.fspath)).stem.removeprefix("test_")
    name = item.name
    if item.config.getoption("count", 1) > 1:  # pytest-repeat: `t[a-3-20]` is `t[a]`, `t[3-20]` `t`
        name = re.sub(r"(-|\[)\d+-\d+\]$", lambda m: "]" if m[1] == "-" else "", name)
    return {point, f"{point}::{getattr(item, 'originalname', name)}", f"{point}::{name}"}


def pytest_collection_modifyitems(config, items):
    if os.environ.get("COMPAT_NO_EXPECTATIONS") == "1":  # `nox -s scan`: the plain outcomes
        return
    expected = tomllib.loads(EXPECTATIONS.read_text()).get(SDK, {}).get(VARIANT, {})
    seen = set()
    for item in items:
        for selector in _selectors(item):
            if selector in expected:
                seen.add(selector)
                item.add_marker(pytest.mark.xfail(strict=True, reason=expected[selector]))
    unknown = set(expected) - seen
    if unknown and not config.option.keyword and not config.option.markexpr:
        raise pytest.UsageError(
            f"expectations.toml [{SDK}.{VARIANT}] names tests that do not exist: {sorted(unknown)}"
        )


def pytest_collection_finish(session):
    # Move everything imported so far out of the collector's sight: full collections in the
    # tests then take microseconds instead of a tenth of a second each.
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _clean_gc_state():
    """Every test starts with no garbage from earlier tests and with the collector on."""
    gc.enable()
    gc.collect()
    yield
    gc.enable()
