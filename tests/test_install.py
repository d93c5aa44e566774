"""README's "Install the patched SDK", run as written in fresh environments: each recipe installs
the patched wheel with the release's dependencies, and a released agent is then freed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import ROOT, kit_copy, nox

from kit import releases

VERSION = "0.5.1"
PYTHON = shutil.which("python3.11") or "python3.11"
# What the environment the tests run in (e.g. nox's) sets, which a user's shell would not.
OUTER = ("VIRTUAL_ENV", "UV_PYTHON", "UV_PROJECT_ENVIRONMENT", "PIP_CONSTRAINT")
# A scripted run (compat_tests/support.py), released, must leave its agent collectable.
CHECK = """
import asyncio, gc, sys, weakref
from importlib.metadata import version
from agents import Runner
from support import answering_agent

async def main():
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = await Runner.run(agent, "Capital of France?")
    assert result.final_output == "Paris"
    result.release_agents()
    del agent
    gc.collect()
    assert ref() is None, "the released agent is still alive"
    print(version("openai-agents"), version("openai"))

asyncio.run(main())
"""


SECTION = "Install the patched SDK"


def section(name: str) -> str:
    text = (ROOT / "README.md").read_text()
    return text.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]


def blocks(name: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section(name), re.S)


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`nox -s build -- 0.5.1`, as the README says, in a copy of the kit."""
    kit = kit_copy(tmp_path_factory.mktemp("build"))
    proc = nox(kit, "-s", "build", "--", VERSION)
    assert proc.returncode == 0, proc.stderr
    return kit


def run(command: str | list[str], cwd: Path, venv: Path | None = None, **env: str) -> str:
    """A command as a user's shell runs it: with `venv` activated, if given."""
    environ = {k: v for k, v in os.environ.items() if k not in OUTER}
    if venv:
        environ |= {"VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}:{environ['PATH']}"}
    proc = subprocess.run(
        command,
        shell=isinstance(command, str),
        cwd=cwd,
        env={**environ, **env},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, f"{command}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def project(kit: Path, tmp_path: Path) -> tuple[Path, str]:
    """A fresh project with the build's files copied into vendor/ by the README's own command,
    and N, read off the wheel's name as the README says."""
    run(blocks(SECTION, "sh")[0].replace("/path/to/this/kit", str(kit)), tmp_path)
    (wheel,) = (tmp_path / "vendor").glob("*.whl")
    build = re.fullmatch(rf"openai_agents-{VERSION}\+agentrelease\.(\d+)-py3-none-any\.whl",
                         wheel.name)[1]  # fmt: skip
    assert build == str(releases.RELEASES[VERSION].build)
    return tmp_path, build


def check_freed(python: Path, cwd: Path) -> str:
    out = run([str(python), "-c", CHECK], cwd, PYTHONPATH=str(ROOT / "compat_tests"))
    installed, openai = out.split()
    assert installed == f"{VERSION}+agentrelease.{releases.RELEASES[VERSION].build}"
    assert f"openai=={openai}\n" in (cwd / "vendor" / f"constraints-{VERSION}.txt").read_text()
    return installed


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_the_readme_install_commands(tool: str, kit: Path, tmp_path: Path):
    cwd, _ = project(kit, tmp_path)
    commands = {c.split()[0]: c for c in blocks(SECTION, "sh")[1].splitlines()}
    if tool == "pip":
        run(f"{PYTHON} -m venv venv", cwd)
    else:
        run(f"uv venv -q --python {PYTHON} venv", cwd)
    run(commands[tool], cwd, venv=cwd / "venv")
    check_freed(cwd / "venv" / "bin" / "python", cwd)


def test_the_readme_requirements_file(kit: Path, tmp_path: Path):
    cwd, build = project(kit, tmp_path)
    (text,) = blocks(SECTION, "text")
    (cwd / "requirements.txt").write_text(text.replace("agentrelease.N", f"agentrelease.{build}"))
    run(f"{PYTHON} -m venv venv", cwd)
    run("pip install -r requirements.txt", cwd, venv=cwd / "venv")
    check_freed(cwd / "venv" / "bin" / "python", cwd)


def test_the_readme_lock_file_project(kit: Path, tmp_path: Path):
    cwd, build = project(kit, tmp_path)
    (toml,) = blocks(SECTION, "toml")
    constraints = (cwd / "vendor" / f"constraints-{VERSION}.txt").read_text().splitlines()
    assert set(re.findall(r'"([^"]+==[^"]+)"', toml.split("[tool.uv]")[1])) <= set(constraints)
    (cwd / "pyproject.toml").write_text(toml.replace("agentrelease.N", f"agentrelease.{build}"))
    run("uv sync", cwd)
    check_freed(cwd / ".venv" / "bin" / "python", cwd)
