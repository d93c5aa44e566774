"""Point 5: a run where A hands off to B keeps both until release, and frees both after."""

import asyncio
import gc
import weakref

from agents import Runner
from support import collected, handoff_agents


async def test_handoff_result_keeps_both_agents_until_release():
    source, target = handoff_agents()
    refs = weakref.ref(source), weakref.ref(target)
    result = await Runner.run(source, "Route me")
    del source, target
    gc.collect()
    assert all(ref() is not None for ref in refs)
    assert result.last_agent.name == "target"
    assert {item.agent.name for item in result.new_items} == {"source", "target"}


async def test_handoff_release_agents_frees_both():
    source, target = handoff_agents()
    refs = weakref.ref(source), weakref.ref(target)
    result = await Runner.run(source, "Route me")
    result.release_agents()
    del source, target
    assert collected(*refs)
    (output,) = [item for item in result.new_items if item.type == "handoff_output_item"]
    assert (output.agent, output.source_agent, output.target_agent) == (None, None, None)


async def test_handoff_agents_freed_by_reference_counting_alone():
    gc.disable()
    source, target = handoff_agents()
    refs = weakref.ref(source), weakref.ref(target)
    await Runner.run(source, "Route me")
    del source, target
    await asyncio.sleep(0)
    assert all(ref() is None for ref in refs)
