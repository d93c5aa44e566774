"""`nox -s check`: the contract in a team's own environment, nothing installed into it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import junit, kit_copy, nox

from kit import MatrixError, check, dist, envs, releases
from kit.junit import read


def listing(env: Path) -> list[tuple[str, int]]:
    return sorted((str(p), p.stat().st_size) for p in env.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def stock(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stock 0.4.1 environment with its era's dependencies (those of 0.4.2, the line's last)."""
    tmp = tmp_path_factory.mktemp("stock")
    pins = tmp / "requirements.txt"
    era = envs.lock(releases.release("0.4.2"), requirements=None).read_text()
    pins.write_text("openai-agents==0.4.1\n" + era)
    return Path(check.throwaway([pins], envs.interpreter(releases.CI_PYTHON), tmp))


def test_a_stock_0_4_1_environment_is_broken_and_moves_to_0_4_2s_wheel(stock: Path, monkeypatch):
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    before = listing(stock.parent.parent)
    verdict = check.check(str(stock), None, [])
    assert listing(stock.parent.parent) == before  # not even bytecode written into it
    assert (verdict["sdk"], verdict["line"], verdict["build"]) == ("0.4.1", "0.4.2", None)
    assert not verdict["holds"]
    points = verdict["points"]
    assert points["alive_until_release"]["status"] == "holds"
    assert points["release_then_gc"]["status"] == "broken"
    assert points["release_then_gc"]["causes"] == ["no-release-api"]
    assert points["resumed_runs"]["status"] == "n/a"
    assert "no-release-api" in verdict["causes"]
    assert verdict["remedy"].startswith("move to the line's last patch release, 0.4.2, and ")
    assert "patches/0.4.2/" in verdict["remedy"]
    text = check.render(verdict)
    assert "openai-agents 0.4.1 on Python 3.11" in text and "contract BROKEN" in text


def test_a_patched_0_5_1_environment_holds(tmp_path: Path):
    kit = kit_copy(tmp_path)
    wheel, constraints = dist.build("0.5.1", tmp_path / "dist")
    args = ("--requirements", str(wheel), str(constraints), "--json")
    proc = nox(kit, "-s", "check", "--", *args)
    assert proc.returncode == 0, proc.stderr
    verdict = json.loads(proc.stdout)
    rel = releases.release("0.5.1")
    assert (verdict["build"], verdict["series_sha256"]) == (rel.build, rel.series_sha256)
    assert verdict["holds"] and verdict["remedy"] is None
    assert verdict["points"]["release_then_gc"]["status"] == "holds"
    assert verdict["points"]["resumed_runs"]["status"] == "n/a"  # no RunState before 0.8.0
    assert verdict["points"]["nothing_reachable"]["status"] == "holds"


def test_failures_are_classified_by_the_causes_of_the_release(tmp_path: Path):
    outcomes = {
        "release_then_gc::test_release_agents_frees_agent": "failed",  # [no-release-api]
        "resumed_runs::test_resuming_again_frees_agent": "failed",  # [no-run-state], but...
        "kept_items::test_items_hold_their_agent": "failed",  # in no cause
        "alive_until_release::test_alive": "passed",
    }
    path = junit(tmp_path, "x", outcomes)
    points, causes = check.classify(read(path)[1], "0.4.1")
    assert points["release_then_gc"]["causes"] == ["no-release-api"]
    # ...an [[absent]] test that fails with an AssertionError is broken, not n/a.
    assert points["resumed_runs"]["status"] == "broken"
    assert points["resumed_runs"]["unknown"][0]["message"] == "AssertionError: agent alive"
    assert points["kept_items"]["unknown"][0]["test"] == "kept_items::test_items_hold_their_agent"
    assert points["alive_until_release"]["status"] == "holds"
    assert set(causes) == {"no-release-api"}
    assert check.classify(read(path)[1], "0.9.3")[0]["release_then_gc"]["causes"] == []


def test_what_cannot_be_checked_is_refused(tmp_path: Path):
    with pytest.raises(MatrixError, match="0.0.17 is older than any release the kit knows"):
        check.identify("0.0.17")
    with pytest.raises(MatrixError, match="cannot import agents: ModuleNotFoundError"):
        check.probe(envs.interpreter(releases.CI_PYTHON))
    old = shutil.which("python3.8")
    if old:
        with pytest.raises(MatrixError, match="Python 3.8.* cannot run pytest-asyncio"):
            check.suite_deps(old, "3.8")


def test_our_builds_and_their_lines_are_named_with_what_to_install():
    rel = releases.release("0.5.1")
    current = check.identify(f"0.5.1+agentrelease.{rel.build}")
    assert (current["build"], current["series_sha256"]) == (rel.build, rel.series_sha256)
    assert check.remedy(current).startswith("none yet: our newest build of 0.5.1")
    older = check.identify(f"0.5.1+agentrelease.{rel.build - 1}")
    assert older["series_sha256"] is None
    assert check.remedy(older).startswith(f"install our current build {rel.build} of 0.5.1: ")
    assert check.identify("0.5.1+other.1")["build"] is None  # a label that is not ours
    assert check.remedy(check.identify("0.5.1")).startswith("install the patched wheel of 0.5.1")
    assert check.identify("0.6.0")["line"] == "0.6.9"  # upstream's fix release, in the 0.6 line
    assert check.identify("9.0.0")["line"] is None
