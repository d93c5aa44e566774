"""Point 3: a result that goes out of scope takes its agent with it (issue #2008)."""

import asyncio
import gc
import weakref

from agents import Runner
from support import answering_agent, collected


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
