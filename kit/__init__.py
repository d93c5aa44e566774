"""The kit's tooling: the release matrix, sdists and series, cell environments, expectations, the
report, CI selection and the scan. `noxfile.py` is its command line.

Python 3.9+ and the standard library (plus `packaging`): `compat_tests/conftest.py` imports
`kit.expectations` inside every cell's environment.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATCHES = ROOT / "patches"
BUILD = ROOT / "build"
CACHE = ROOT / ".nox" / ".cache"  # downloads that outlive a session: sdists, wheels, locks


class MatrixError(Exception):
    """A problem with the user's input or environment, reported without a traceback."""


def version_key(version: str) -> tuple:
    """Releases by number, anything else (the weekly `latest`) after them."""
    if re.fullmatch(r"\d+(\.\d+)*", version):
        return (0, *map(int, version.split(".")))
    return (1, version)
