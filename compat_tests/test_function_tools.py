"""Point 8: a three-turn run with two function-tool calls follows the same contract."""

import asyncio
import gc
import weakref

from agents import Runner
from support import collected, tool_agent


async def test_tool_run_release_agents_frees_agent():
    agent = tool_agent()
    ref = weakref.ref(agent)
    result = await Runner.run(agent, "Capitals?")
    assert result.final_output == "Paris and Rome"
    result.release_agents()
    del agent
    assert collected(ref)
    assert all(item.agent is None for item in result.new_items)


async def test_tool_run_freed_by_reference_counting_alone():
    gc.disable()
    agent = tool_agent()
    ref = weakref.ref(agent)
    await Runner.run(agent, "Capitals?")
    del agent
    await asyncio.sleep(0)
    assert ref() is None


async def test_tool_run_freed_inside_running_loop_without_yielding():
    agent = tool_agent()
    ref = weakref.ref(agent)
    await Runner.run(agent, "Capitals?")
    del agent
    assert collected(ref)
