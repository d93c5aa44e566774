"""Cell environments and the cache they are built from: every damaged entry is built again, and
two streams building the same environment take turns."""

from __future__ import annotations

import time
import zipfile
from pathlib import Path

import pytest
from helpers import kit_copy, nox_started

from kit import envs, releases

DAMAGE = {
    "truncated wheel": lambda entry: _truncate(next(entry.glob("*.whl"))),
    "no wheel": lambda entry: next(entry.glob("*.whl")).unlink(),
    "no series.json": lambda entry: (entry / "series.json").unlink(),
    "truncated series.json": lambda entry: _truncate(entry / "series.json"),
}


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("WHEELS", "LOCKS", "ENVS"):
        monkeypatch.setattr(envs, name, tmp_path / name.lower())
    return tmp_path


def test_a_damaged_wheel_entry_is_built_again(cache: Path):
    built, _ = envs.wheel("0.5.1", "unpatched")
    entry = built.parent
    stale = envs.WHEELS / f".tmp-{entry.name}-killed"  # what a kill during a build leaves
    for damage in DAMAGE.values():
        (stale / "tree").mkdir(parents=True)
        damage(entry)
        again, applied = envs.wheel("0.5.1", "unpatched")
        assert (again, applied) == (built, [])
        assert zipfile.ZipFile(again).testzip() is None
        assert not stale.exists()


def test_a_lock_cut_at_a_line_end_is_compiled_again(cache: Path):
    pinned = envs.lock(releases.RELEASES["0.5.1"])
    whole = pinned.read_text()
    assert "uvicorn==" in whole
    pinned.write_text(whole.split("uvicorn==")[0])
    assert envs.lock(releases.RELEASES["0.5.1"]).read_text() == whole


def test_a_kept_environment_is_checked_and_rebuilt_when_damaged(cache: Path):
    def build() -> dict:
        return envs.environment("cell", "3.11", "0.5.1", "unpatched")

    assert not build()["reused"]
    assert build()["reused"]
    env = envs.ENVS / "cell"
    started = time.perf_counter()
    assert envs._installed(env)
    assert time.perf_counter() - started < 0.1  # a warm cell takes about 3 s in all
    items = next(env.glob("lib/python*/site-packages/agents/items.py"))
    stamp = env / "kit-stamp.json"
    for damage in (items.unlink, lambda: stamp.write_text(""), lambda: _truncate(stamp)):
        damage()
        assert not build()["reused"]
        assert items.exists()
        assert build()["reused"]


def test_two_streams_building_one_environment_take_turns(tmp_path: Path):
    """The same cell started twice at once: one builds its environment, the other waits for it
    and reuses it (they raced on `uv venv --clear` before)."""
    kit = kit_copy(tmp_path)
    cell = "compat(0.5.1-unpatched-py3.11)"
    runs = [nox_started(kit, "-s", cell) for _ in range(2)]
    outputs = [run.communicate()[1] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    states = sorted("environment reused" in out for out in outputs)
    assert states == [False, True], outputs
