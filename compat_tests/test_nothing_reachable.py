"""Point 16: after release_agents() no agent is strongly reachable from the result, whatever SDK
feature the run used. A walk of the result's strong references (support.agent_paths) names the
path to each agent it finds.

Each scenario builds its agents with one feature and runs them: plain, streamed, and streamed
with a caller who stops reading early. A streamed run that ends in an error (a tripwire, too many
turns) keeps its result, so those are walked too. A feature the release lacks fails to build with
an ImportError, AttributeError or TypeError (expectations.toml lists those as absent). The
scenarios live in support.py: test_freed_out_of_scope.py drops the same results unreleased."""

from __future__ import annotations

import pytest
from agents import Runner
from support import (
    ERRORS,
    SCENARIOS,
    agent_paths,
    build_scenario,
    read_until_the_error,
    run,
)


async def released_result_reaches_no_agent(feature: str, how: str) -> None:
    agent, kwargs = await build_scenario(feature)
    result = await run(agent, how, **kwargs)
    assert agent_paths(result), "the walk must see the agents the result holds before release"
    result.release_agents()
    paths = agent_paths(result)
    assert not paths, "still reachable after release_agents():\n" + "\n".join(paths)
    assert agent.name  # the caller's agent is alive all along: only the result let go of it


@pytest.mark.parametrize("feature", list(SCENARIOS))
async def test_release_leaves_no_agent_reachable(feature):
    await released_result_reaches_no_agent(feature, "run")


@pytest.mark.parametrize("feature", list(SCENARIOS))
async def test_streamed_release_leaves_no_agent_reachable(feature):
    await released_result_reaches_no_agent(feature, "run_streamed")


@pytest.mark.parametrize("feature", list(SCENARIOS))
async def test_unread_stream_release_leaves_no_agent_reachable(feature):
    await released_result_reaches_no_agent(feature, "run_streamed_break")


@pytest.mark.parametrize("read", ["read_all", "stop_early"])
@pytest.mark.parametrize("error", list(ERRORS))
async def test_streamed_release_after_error_leaves_no_agent_reachable(error, read):
    """The exception is the caller's; what the result keeps of it (the stored error, a finished
    task's) must not pin the agent, whether the caller read it or stopped reading first."""
    build, exception = ERRORS[error]
    agent, kwargs = build()
    result = Runner.run_streamed(agent, "Go", **kwargs)
    await read_until_the_error(result, exception, stop_early=read == "stop_early")
    assert agent_paths(result), "the walk must see the agents the result holds before release"
    result.release_agents()
    paths = agent_paths(result)
    assert not paths, "still reachable after release_agents():\n" + "\n".join(paths)
