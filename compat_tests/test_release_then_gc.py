"""Point 2: after release and gc the agent is gone; the result says so instead of lying. That
holds for every scenario of the walk (test_nothing_reachable.py) with the result kept: nothing
else the SDK keeps (a module-level store, a task) may hold an agent of a released result."""

import gc
import weakref
from types import SimpleNamespace

import pytest
from agents import Runner
from agents.exceptions import AgentsException
from support import (
    ERRORS,
    SCENARIOS,
    all_collected,
    answering_agent,
    build_scenario,
    collected,
    read_until_the_error,
    run,
    watch,
)


async def test_release_agents_frees_agent():
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = await Runner.run(agent, "Capital of France?")
    result.release_agents()
    del agent
    assert collected(ref)
    assert all(item.agent is None for item in result.new_items)


async def test_last_agent_raises_once_agent_is_gone():
    agent = answering_agent()
    result = await Runner.run(agent, "Capital of France?")
    result.release_agents()
    del agent
    gc.collect()
    with pytest.raises(AgentsException):
        _ = result.last_agent


async def test_released_agent_still_reachable_while_caller_holds_it():
    agent = answering_agent()
    result = await Runner.run(agent, "Capital of France?")
    result.release_agents()
    gc.collect()
    assert result.last_agent is agent
    assert all(item.agent is agent for item in result.new_items)


async def test_release_agents_can_leave_items_alone():
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = await Runner.run(agent, "Capital of France?")
    result.release_agents(release_new_items=False)
    del agent
    gc.collect()
    assert all(item.agent is ref() is not None for item in result.new_items)
    assert result.last_agent is ref()


async def test_item_release_agent_frees_agent():
    agent = answering_agent()
    ref = weakref.ref(agent)
    items = list((await Runner.run(agent, "Capital of France?")).new_items)
    for item in items:
        item.release_agent()
    del agent
    assert collected(ref)
    assert all(item.agent is None for item in items)


async def test_release_agents_skips_entries_without_release_agent():
    """`new_items` is the caller's list too; as upstream, entries that cannot release are
    skipped, and the items after them are still released."""
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = await Runner.run(agent, "Capital of France?")
    items = list(result.new_items)
    result.new_items[:0] = ["a note of the caller's", SimpleNamespace(release_agent=None)]
    result.release_agents()
    del agent
    assert collected(ref)
    assert items and all(item.agent is None for item in items)


@pytest.mark.parametrize("how", ["run", "run_streamed", "run_streamed_break"])
@pytest.mark.parametrize("feature", list(SCENARIOS))
async def test_kept_released_result_frees_every_agent(feature, how):
    """reviewer r024b 1: a kept released result whose agent tool stopped for approval still
    kept both agents, through the SDK's store of pending nested results."""
    agent, kwargs = await build_scenario(feature)
    refs = watch(agent, kwargs)
    result = await run(agent, how, **kwargs)
    result.release_agents()
    del agent, kwargs
    await all_collected(refs, "with the released result kept", kept=result)
    assert result.new_items is not None


@pytest.mark.parametrize("how", ["run", "run_streamed"])
@pytest.mark.parametrize("feature", list(SCENARIOS))
async def test_kept_result_released_after_to_state_frees_every_agent(feature, how):
    """A state taken before the release (and dropped since) must not leave the kept, released
    result anything that holds an agent: `to_state()` may cache what it builds."""
    await _release_and_take_a_state(feature, how, state_first=True)


@pytest.mark.parametrize("how", ["run", "run_streamed"])
@pytest.mark.parametrize("feature", list(SCENARIOS))
async def test_kept_result_to_state_after_release_frees_every_agent(feature, how):
    """A state taken after the release (release now, approve later; dropped since) must not leave
    the kept, released result anything that holds an agent: `to_state()` may cache what it
    builds."""
    await _release_and_take_a_state(feature, how, state_first=False)


async def _release_and_take_a_state(feature, how, state_first):
    agent, kwargs = await build_scenario(feature)
    refs = watch(agent, kwargs)
    result = await run(agent, how, **kwargs)
    if state_first:
        result.to_state()
    result.release_agents()
    if not state_first:
        result.to_state()
    del agent, kwargs
    await all_collected(refs, "with the released result kept", kept=result)


@pytest.mark.parametrize("how", ["run_streamed", "run_streamed_break"])
@pytest.mark.parametrize("error", list(ERRORS))
async def test_kept_released_result_of_failed_run_frees_every_agent(error, how):
    build, exception = ERRORS[error]
    agent, kwargs = build()
    refs = watch(agent, kwargs)
    result = Runner.run_streamed(agent, "Go", **kwargs)
    await read_until_the_error(result, exception, stop_early=how == "run_streamed_break")
    result.release_agents()
    del agent, kwargs
    await all_collected(refs, "with the released result kept", kept=result)
