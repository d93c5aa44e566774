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


def section(name: str) -> str:
    text = (ROOT / "README.md").read_text()
    return text.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]


def blocks(name: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section(name), re.S)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`nox -s build -- 0.5.1`, as the README says, in a copy of the kit."""
    kit = kit_copy(tmp_path_factory.mktemp("build"))
    proc = nox(kit, "-s", "build", "--", VERSION)
    assert proc.returncode == 0, proc.stderr
    return kit / "dist"


def run(command: str | list[str], cwd: Path, **env: str) -> str:
    shell = isinstance(command, str)
    environ = {k: v for k, v in os.environ.items() if k not in OUTER}
    proc = subprocess.run(
        command, shell=shell, cwd=cwd, env={**environ, **env}, capture_output=True, text=True
    )
    assert proc.returncode == 0, f"{command}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def check_freed(python: Path, cwd: Path) -> str:
    out = run([str(python), "-c", CHECK], cwd, PYTHONPATH=str(ROOT / "compat_tests"))
    installed, openai = out.split()
    assert installed == f"{VERSION}+agentrelease.{releases.RELEASES[VERSION].build}"
    assert f"openai=={openai}\n" in (cwd / "dist" / f"constraints-{VERSION}.txt").read_text()
    return installed


@pytest.mark.parametrize("tool", ["pip", "uv"])
def test_the_readme_install_commands(tool: str, dist: Path, tmp_path: Path):
    commands = {c.split()[0]: c for c in blocks("Install the patched SDK", "sh")[0].splitlines()}
    shutil.copytree(dist, tmp_path / "dist")
    if tool == "pip":
        run([PYTHON, "-m", "venv", "venv"], tmp_path)
        run(commands["pip"].replace("pip ", "venv/bin/pip ", 1), tmp_path)
    else:
        run(["uv", "venv", "-q", "--python", PYTHON, "venv"], tmp_path)
        run(commands["uv"], tmp_path, VIRTUAL_ENV=str(tmp_path / "venv"))
    check_freed(tmp_path / "venv" / "bin" / "python", tmp_path)


def test_the_readme_requirements_lines(dist: Path, tmp_path: Path):
    shutil.copytree(dist, tmp_path / "dist")
    (text,) = blocks("Install the patched SDK", "text")
    build = releases.RELEASES[VERSION].build
    (tmp_path / "requirements.txt").write_text(
        text.replace("agentrelease.N", f"agentrelease.{build}")
    )
    run([PYTHON, "-m", "venv", "venv"], tmp_path)
    run(["venv/bin/pip", "install", "-r", "requirements.txt"], tmp_path)
    check_freed(tmp_path / "venv" / "bin" / "python", tmp_path)


def test_the_readme_lock_file_project(dist: Path, tmp_path: Path):
    shutil.copytree(dist, tmp_path / "dist")
    shutil.copytree(dist, tmp_path / "vendor")
    (toml,) = blocks("Install the patched SDK", "toml")
    build = releases.RELEASES[VERSION].build
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "server"\nversion = "0"\nrequires-python = ">=3.11"\n'
        + toml.replace("[project]\n", "").replace("agentrelease.N", f"agentrelease.{build}")
    )
    run(["uv", "lock", "--python", PYTHON], tmp_path)
    run(["uv", "sync", "--frozen", "--python", PYTHON], tmp_path)
    check_freed(tmp_path / ".venv" / "bin" / "python", tmp_path)
