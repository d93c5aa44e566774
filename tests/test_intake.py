"""Taking in a release: the series' README from its patches, and add-release reproducing a
committed release byte for byte."""

from __future__ import annotations

import filecmp
from pathlib import Path

from helpers import ROOT, kit_copy, nox

from kit import intake

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
