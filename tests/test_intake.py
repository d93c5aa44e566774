"""Taking in a release: the series' README from its patches, and add-release reproducing a
committed release byte for byte."""

from __future__ import annotations

import filecmp
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers import ROOT, kit_copy, nox, nox_started, slow_git

from kit import intake, releases, safe, sdists, series

PATCH = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A <a@example.invalid>
Date: Wed, 2 Dec 2026 19:07:16 +0000
Subject: [PATCH] items, result: add release_agent() and
 release_agents()

Why it is needed.

Deviations from upstream v0.6.0:
- The strong reference stays in the instance
  __dict__ until release.
- No RunResultBase.__del__.

Bug: https://github.com/openai/openai-agents-python/issues/2008
Applied-Upstream: v0.6.0, commit:283ead8fe8de7a4f9d804a53c6f8f6529a7812ec
---
 src/agents/items.py | 1 +
"""


def test_readme_lists_subjects_trailers_and_deviations(tmp_path: Path):
    (tmp_path / "0.5.1").mkdir()
    (tmp_path / "0.5.1" / "0001-items-result-add.patch").write_text(PATCH)
    text = intake.readme("0.5.1", tmp_path)
    assert "- `0001-items-result-add.patch`: items, result: add release_agent() and" in text
    assert " release_agents().\n  Applied-Upstream: v0.6.0, commit:283ead8fe8de" in text
    assert "Bug:" not in text
    assert text.endswith(
        "- The strong reference stays in the instance __dict__ until release.\n"
        "- No RunResultBase.__del__.\n"
    )


def test_re_adding_a_release_reproduces_the_commit(tmp_path: Path):
    """The issue's check: delete patches/0.23.1/, `nox -s add-release -- 0.23.1 --from 0.22.3`,
    and nothing differs from what is committed (series, README, releases.toml)."""
    kit = kit_copy(tmp_path)
    for path in (kit / "patches" / "0.23.1").iterdir():
        path.unlink()
    (kit / "patches" / "0.23.1").rmdir()
    proc = nox(kit, "-s", "add-release", "--", "0.23.1", "--from", "0.22.3")
    assert proc.returncode == 0, proc.stderr
    assert "patches/0.22.3/ applied cleanly to 0.23.1" in proc.stderr
    assert "compat(0.23.1-patched-py3.11): as expected" in proc.stderr
    same = filecmp.dircmp(kit / "patches" / "0.23.1", ROOT / "patches" / "0.23.1")
    assert (same.left_only, same.right_only, same.diff_files) == ([], [], [])
    assert (kit / "releases.toml").read_bytes() == (ROOT / "releases.toml").read_bytes()
    assert not (kit / "build" / "trees" / "0.23.1").exists()


# --- interrupts and refusals: nothing a maintainer wrote is lost ------------------------------


def _series(kit: Path, version: str = "0.5.1") -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (kit / "patches" / version).iterdir()}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_tree_interrupted_during_git_am_leaves_nothing_and_is_made_again(tmp_path, sig):
    kit = kit_copy(tmp_path)
    path, marker = slow_git(tmp_path)
    started = nox_started(kit, "-s", "tree", "--", "0.5.1", PATH=path, MARKER=str(marker))
    deadline = time.monotonic() + 60
    while not marker.exists() or not marker.read_text().strip():
        assert time.monotonic() < deadline and started.poll() is None, started.stderr.read()
        time.sleep(0.05)
    git_am = int(marker.read_text())
    started.send_signal(sig)
    started.communicate(timeout=30)
    trees = kit / "build" / "trees"
    assert not (trees / "0.5.1").exists()
    if sig == signal.SIGKILL:  # nothing can clean up after SIGKILL: the next run does
        os.killpg(git_am, signal.SIGKILL)
    else:
        time.sleep(0.5)
        assert not _alive(git_am), "the interrupted git am still runs"
        assert not list(trees.glob(".tmp-*"))
    export = nox(kit, "-s", "export", "--", "0.5.1")
    assert export.returncode == 1 and "no tree for 0.5.1" in export.stderr

    again = nox(kit, "-s", "tree", "--", "0.5.1")
    assert again.returncode == 0, again.stderr
    assert not list(trees.glob(".tmp-*"))
    before = _series(kit)
    export = nox(kit, "-s", "export", "--", "0.5.1")
    patches = len(releases.series("0.5.1"))
    assert export.returncode == 0 and f"wrote {patches} patches" in export.stderr
    assert _series(kit) == before


def test_export_refuses_an_unfinished_tree_and_unsaved_edits(tmp_path: Path):
    kit = kit_copy(tmp_path)
    tree = series.make_tree("0.5.1", kit / "build" / "trees" / "0.5.1")
    patches = sorted((kit / "patches" / "0.5.1").glob("*.patch"))
    before = _series(kit)
    releases_toml = (kit / "releases.toml").read_bytes()

    def export(*args: str) -> str:
        proc = nox(kit, "-s", "export", "--", "0.5.1", *args)
        assert proc.returncode == 1, proc.stderr
        assert "Traceback" not in proc.stderr
        assert _series(kit) == before and (kit / "releases.toml").read_bytes() == releases_toml
        return proc.stderr

    text = patches[1].read_text()
    context = next(line for line in text.split("\n@@ ", 1)[1].splitlines()[1:] if line[:1] == " ")
    broken = tmp_path / "broken.patch"
    broken.write_text(text.replace(context, context + "  # changed upstream", 1))
    with pytest.raises(subprocess.CalledProcessError):
        series.git(tree, "am", str(patches[0]), str(broken))
    assert f"{tree} has a `git am` in progress" in export("--force")
    series.git(tree, "am", "--abort")
    series.git(tree, "am", str(patches[0]))
    assert f"{tree} has 1 commits over its base but patches/0.5.1/ has {len(patches)}" in export()
    (tree / "README.md").write_text("edited\n")
    assert f"{tree} has uncommitted changes (README.md)" in export()
    series.git(tree, "checkout", "README.md")
    series.git(tree, "am", *map(str, patches[1:]))
    unedited = patches[2].read_text()
    edited = unedited.replace("\n\n", "\n\nA maintainer's line.\n\n", 1)
    patches[2].write_text(edited)
    before = _series(kit)
    message = f"patches/0.5.1/{patches[2].name} has edits that are neither committed nor exported"
    assert message in export("--force")
    assert patches[2].read_text() == edited
    patches[2].write_text(unedited)
    notes = kit / "patches" / "0.5.1" / "README.md"
    notes.write_text(notes.read_text() + "A maintainer's note.\n")
    before = _series(kit)
    assert "patches/0.5.1/README.md has edits that are neither committed" in export("--force")
    assert notes.read_text().endswith("A maintainer's note.\n")


def test_export_puts_back_a_series_left_aside_by_a_kill(tmp_path: Path):
    """A SIGKILL between export's two renames leaves the old series in build/: it is restored."""
    kit = kit_copy(tmp_path)
    before = _series(kit)
    (kit / "build").mkdir()
    (kit / "patches" / "0.5.1").rename(kit / "build" / ".old-patches-0.5.1")
    series.apply_series("0.5.1", series.make_tree("0.5.1", kit / "build" / "trees" / "0.5.1"))
    proc = nox(kit, "-s", "export", "--", "0.5.1")
    assert proc.returncode == 0, proc.stderr
    assert _series(kit) == before


def test_add_release_refuses_a_release_it_has(tmp_path: Path):
    kit = kit_copy(tmp_path)
    before = _series(kit, "0.7.0")
    releases_toml = (kit / "releases.toml").read_bytes()
    proc = nox(kit, "-s", "add-release", "--", "0.7.0")
    assert proc.returncode == 1
    assert "patches/0.7.0/ exists: 0.7.0 is taken in already (`--force` derives" in proc.stderr
    first = sorted((kit / "patches" / "0.7.0").glob("*.patch"))[0]
    first.write_text(first.read_text() + "-- \nA maintainer's line.\n")
    proc = nox(kit, "-s", "add-release", "--", "0.7.0", "--force")
    assert proc.returncode == 1
    assert f"patches/0.7.0/{first.name} has edits that are neither committed" in proc.stderr
    assert first.read_text().endswith("A maintainer's line.\n")
    assert {k: v for k, v in _series(kit, "0.7.0").items() if k != first.name} == {
        k: v for k, v in before.items() if k != first.name
    }
    assert (kit / "releases.toml").read_bytes() == releases_toml
    assert not (kit / "build" / "trees" / "0.7.0").exists()


def test_a_tree_from_a_damaged_sdist_offline_names_it_and_leaves_nothing(tmp_path: Path):
    kit = kit_copy(tmp_path, cache=False)
    good = sdists.sdist("0.5.1")
    cached = kit / ".nox" / ".cache" / "sdists" / good.name
    cached.parent.mkdir(parents=True)
    safe.write_recorded(cached, good.read_bytes()[:100_000], safe.sha256(good))
    proc = nox(kit, "-s", "tree", "--", "0.5.1", https_proxy="http://127.0.0.1:9")
    assert proc.returncode == 1
    assert f"the cached {cached} does not match PyPI's sha256" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert [p.name for p in (kit / "build" / "trees").iterdir()] == [".lock-0.5.1"]
