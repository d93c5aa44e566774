"""Point 6: streamed runs (events drained) follow the same contract."""

import asyncio
import gc
import weakref

import pytest
from agents import Runner
from agents.exceptions import AgentsException
from support import answering_agent, collected, handoff_agents


async def run_streamed(agent):
    result = Runner.run_streamed(agent, "Capital of France?")
    async for _ in result.stream_events():
        pass
    return result


async def test_streamed_result_keeps_agent_until_release():
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = await run_streamed(agent)
    del agent
    gc.collect()
    assert result.last_agent is ref() is not None
    assert all(item.agent is ref() for item in result.new_items)


async def test_streamed_release_agents_frees_agent():
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = await run_streamed(agent)
    result.release_agents()
    del agent
    assert collected(ref)
    with pytest.raises(AgentsException):
        _ = result.last_agent


async def test_streamed_handoff_release_agents_frees_both():
    source, target = handoff_agents()
    refs = weakref.ref(source), weakref.ref(target)
    result = await run_streamed(source)
    assert result.last_agent.name == "target"
    result.release_agents()
    del source, target
    assert collected(*refs)


async def test_streamed_result_freed_after_gc():
    agent = answering_agent()
    ref = weakref.ref(agent)
    await run_streamed(agent)
    del agent
    await asyncio.sleep(0)
    assert collected(ref)


async def test_streamed_result_freed_by_reference_counting_alone():
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = await run_streamed(agent)
    await asyncio.sleep(0)
    gc.collect()
    gc.disable()
    del agent, result
    await asyncio.sleep(0)
    assert ref() is None
