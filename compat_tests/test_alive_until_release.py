"""Point 1: until released, a result and its items keep their agents alive."""

import gc
import weakref

from agents import Runner
from support import answering_agent, handoff_agents, tool_agent


async def test_last_agent_stays_alive_without_caller_reference():
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = await Runner.run(agent, "Capital of France?")
    del agent
    gc.collect()
    assert ref() is not None
    assert result.last_agent is ref()
    assert result.last_agent.name == "answerer"


async def test_message_items_keep_their_agent():
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = await Runner.run(agent, "Capital of France?")
    del agent
    gc.collect()
    assert result.new_items
    assert all(item.agent is ref() for item in result.new_items)


async def test_tool_items_keep_their_agent():
    agent = tool_agent()
    ref = weakref.ref(agent)
    result = await Runner.run(agent, "Capitals?")
    del agent
    gc.collect()
    kinds = {item.type for item in result.new_items}
    assert {"tool_call_item", "tool_call_output_item", "message_output_item"} <= kinds
    assert all(item.agent is ref() for item in result.new_items)


async def test_handoff_items_keep_source_and_target():
    source, target = handoff_agents()
    source_ref, target_ref = weakref.ref(source), weakref.ref(target)
    result = await Runner.run(source, "Route me")
    del source, target
    gc.collect()
    (output,) = [item for item in result.new_items if item.type == "handoff_output_item"]
    assert output.source_agent is source_ref() is not None
    assert output.target_agent is target_ref() is not None
    assert result.last_agent is target_ref()
