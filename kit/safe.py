"""What an interrupt or a second stream must never break: files written whole or not at all,
directories swapped in one step, one builder per cache entry at a time, no temporaries or child
processes left behind."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_atomically(target: Path, data: bytes) -> None:
    """Write `target` through a unique temporary file, so concurrent streams never see half."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=target.parent, prefix=f".tmp-{target.name}-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(partial, 0o644)  # mkstemp's 0600 would hide dist/ from a web server
        os.replace(partial, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)


def recorded(path: Path) -> Path:
    """The file beside `path` that records its sha256."""
    return path.with_name(path.name + ".sha256")


def write_recorded(path: Path, data: bytes, digest: str | None = None) -> None:
    """Write `path` and its sha256 (`digest`, as its source published it, or the data's own)."""
    write_atomically(recorded(path), (digest or hashlib.sha256(data).hexdigest()).encode())
    write_atomically(path, data)


def intact(path: Path) -> bool:
    """Whether `path` exists with the bytes its recorded sha256 names."""
    try:
        return sha256(path) == recorded(path).read_text().strip()
    except OSError:
        return False


@contextlib.contextmanager
def locked(directory: Path, name: str):
    """Hold the lock of entry `name` in `directory`, waiting while another stream holds it.
    Under the lock, its temporaries left by a killed process are removed."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / f".lock-{name}", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        for stale in directory.glob(f".tmp-{name}-*"):
            remove(stale)
        yield


def scratch(directory: Path, name: str) -> Path:
    """A new temporary directory for entry `name`, beside where the entry goes."""
    return Path(tempfile.mkdtemp(dir=directory, prefix=f".tmp-{name}-"))


def remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def uninterrupted():
    """Hold SIGINT and SIGTERM until the block is done (they are delivered after it)."""
    held = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def replace_dir(new: Path, dest: Path, backup: Path) -> None:
    """Put the finished directory `new` at `dest`, replacing what is there in one step as far as
    Ctrl-C or kill can tell. A SIGKILL between the two renames leaves the old one at `backup`,
    which `restore` puts back."""
    restore(dest, backup)
    remove(backup)
    with uninterrupted():
        if dest.exists():
            os.rename(dest, backup)
        os.rename(new, dest)
    remove(backup)


def restore(dest: Path, backup: Path) -> None:
    """Undo a `replace_dir` killed between its renames."""
    if backup.is_dir() and not dest.exists():
        os.rename(backup, dest)


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    """`subprocess.run` capturing text output, with the command and everything it started
    killed if the kit is interrupted meanwhile (they run in their own process group)."""
    with subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, **kwargs,
    ) as proc:  # fmt: skip
        try:
            out, err = proc.communicate()
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
    return subprocess.CompletedProcess(args, proc.returncode, out, err)
