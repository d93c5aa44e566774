from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def patches(tmp_path: Path) -> Path:
    """A series for 0.5.1: one patch adding three lines to src/agents/items.py."""
    (tmp_path / "patches" / "0.5.1").mkdir(parents=True)
    (tmp_path / "patches" / "0.5.1" / "0001-items-release.patch").write_text(
        "Subject: [PATCH] items: release\n---\n"
        "diff --git a/src/agents/items.py b/src/agents/items.py\n"
        "--- a/src/agents/items.py\n+++ b/src/agents/items.py\n"
        "@@ -2,2 +2,5 @@\n line2\n+added3\n+added4\n+added5\n line3\n"
    )
    return tmp_path / "patches"
