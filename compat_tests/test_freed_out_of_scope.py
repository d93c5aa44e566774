"""Point 3: a result that goes out of scope takes its agent with it (issue #2008)."""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest
from agents import Runner
from support import (
    ERRORS,
    SCENARIOS,
    all_collected,
    answering_agent,
    build_scenario,
    collected,
    run,
    watch,
)

HOWS = ["run", "run_streamed", "run_streamed_break"]


async def test_freed_after_gc():
    agent = answering_agent()
    ref = weakref.ref(agent)
    await Runner.run(agent, "Capital of France?")
    del agent
    await asyncio.sleep(0)
    assert collected(ref)


async def test_freed_by_reference_counting_alone():
    gc.disable()
    agent = answering_agent()
    ref = weakref.ref(agent)
    await Runner.run(agent, "Capital of France?")
    del agent
    await asyncio.sleep(0)
    assert ref() is None


async def test_freed_inside_running_loop_without_yielding():
    # The shape of #2008: a server handler that runs an agent and moves on without awaiting.
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = await Runner.run(agent, "Capital of France?")
    assert result.final_output == "Paris"
    del agent, result
    assert collected(ref)


# Every scenario of the walk (test_nothing_reachable.py), dropped unreleased: once the caller lets
# go of the result (and of what it ran with), every agent the scenario built is collected.


async def _drop_and_collect(feature: str, how: str, error: type[BaseException] | None) -> None:
    if error is None:
        agent, kwargs = await build_scenario(feature)
    else:
        agent, kwargs = ERRORS[feature][0]()
    refs = watch(agent, kwargs)
    if error is not None and how != "run_streamed_break":  # the caller gets the exception
        with pytest.raises(error):
            await run(agent, how, **kwargs)
    else:  # the caller gets the result, and drops it unreleased
        await run(agent, how, **kwargs)
    del agent, kwargs
    await all_collected(refs, "after the result was dropped")


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("feature", list(SCENARIOS))
async def test_dropped_result_frees_every_agent(feature, how):
    await _drop_and_collect(feature, how, None)


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("error", list(ERRORS))
async def test_dropped_result_of_failed_run_frees_every_agent(error, how):
    await _drop_and_collect(error, how, ERRORS[error][1])
