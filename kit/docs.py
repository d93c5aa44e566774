"""The measured pages under docs/: each written by the session that measures it, from data kept
beside it (docs/data/<name>.json), and checkable (`-- --check`): the page must be exactly what the
session renders from its data, so it never drifts from its session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from . import ROOT, MatrixError, version_key

DOCS = ROOT / "docs"


def data_path(name: str, docs: Path = DOCS) -> Path:
    return docs / "data" / f"{name}.json"


def load(name: str, docs: Path = DOCS) -> dict | None:
    path = data_path(name, docs)
    return json.loads(path.read_text()) if path.exists() else None


def publish(name: str, data: dict, render: Callable[[dict], str], docs: Path = DOCS) -> Path:
    """Write docs/data/<name>.json and the page rendered from it, docs/<name>.md."""
    data_path(name, docs).parent.mkdir(parents=True, exist_ok=True)
    data_path(name, docs).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    page = docs / f"{name}.md"
    page.write_text(render(data))
    return page


def check(name: str, render: Callable[[dict], str], session: str, docs: Path = DOCS) -> None:
    """Raise unless docs/<name>.md is what `render` makes of docs/data/<name>.json."""
    data, page = load(name, docs), docs / f"{name}.md"
    if data is None or not page.exists():
        raise MatrixError(f"docs/{name}.md or its data is missing: run `nox -s {session}`")
    if page.read_text() != render(data):
        raise MatrixError(
            f"docs/{name}.md is not what `nox -s {session}` renders from "
            f"docs/data/{name}.json: edit neither by hand; re-run the session"
        )


def merged(entries: dict, version: str, entry: dict) -> dict:
    """`entries` (release -> result) with `version`'s replaced, in release order."""
    out = {**entries, version: entry}
    return dict(sorted(out.items(), key=lambda item: version_key(item[0])))
