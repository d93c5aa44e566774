"""Point 4: items the caller kept keep their agent when the result goes; release frees it."""

import gc
import weakref

from agents import Runner
from support import answering_agent, collected, handoff_agents


async def test_kept_items_keep_agent_after_result_is_dropped():
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = await Runner.run(agent, "Capital of France?")
    items = list(result.new_items)
    del agent, result
    gc.collect()
    assert ref() is not None
    assert all(item.agent is ref() for item in items)


async def test_kept_handoff_item_keeps_source_and_target():
    source, target = handoff_agents()
    refs = weakref.ref(source), weakref.ref(target)
    result = await Runner.run(source, "Route me")
    (output,) = [item for item in result.new_items if item.type == "handoff_output_item"]
    del source, target, result
    gc.collect()
    assert (output.source_agent, output.target_agent) == tuple(ref() for ref in refs)
    assert output.target_agent.name == "target"


async def test_release_agent_frees_agent_of_kept_items():
    agent = answering_agent()
    ref = weakref.ref(agent)
    items = list((await Runner.run(agent, "Capital of France?")).new_items)
    del agent
    gc.collect()
    for item in items:
        item.release_agent()
    assert collected(ref)
    assert all(item.agent is None for item in items)


async def test_release_agent_frees_handoff_source_and_target():
    source, target = handoff_agents()
    refs = weakref.ref(source), weakref.ref(target)
    items = list((await Runner.run(source, "Route me")).new_items)
    del source, target
    for item in items:
        item.release_agent()
    assert collected(*refs)
    (output,) = [item for item in items if item.type == "handoff_output_item"]
    assert output.source_agent is None
    assert output.target_agent is None
