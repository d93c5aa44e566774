"""Point 17: release_agents() changes only the result it is called on. A copy of the result
(`copy.copy`, `dataclasses.replace`) and the caller's RunState of a resumed run read as they did
before: the releasing result weakens its own copy of what it shares, never the shared object.
Items are the exception, as upstream: `release_new_items=True` releases the items in place."""

import copy
import dataclasses
import gc
import weakref

import pytest
from agents import (
    InputGuardrailTripwireTriggered,
    OutputGuardrailTripwireTriggered,
    Runner,
    UserError,
    function_tool,
)
from support import (
    approval_agent,
    input_tripwire,
    output_tripwire,
    run,
    run_over,
    same_name_handoff_agents,
    tool_agent,
)

HOW = ["run", "run_streamed"]
TWIN = {"copy": copy.copy, "replace": dataclasses.replace}


@pytest.mark.parametrize("twin", list(TWIN))
@pytest.mark.parametrize("how", HOW)
async def test_releasing_a_twin_leaves_the_original_result(how, twin):
    source, target = same_name_handoff_agents()
    result = await run(source, how, "Route me")
    TWIN[twin](result).release_agents()
    assert result.last_agent is target
    assert [item.agent for item in result.new_items] != [None] * len(result.new_items)


@pytest.mark.parametrize("twin", list(TWIN))
@pytest.mark.parametrize("how", HOW)
async def test_releasing_a_twin_leaves_the_originals_state(how, twin):
    source, target = same_name_handoff_agents()
    result = await run(source, how, "Route me")
    before = result.to_state().to_json()
    TWIN[twin](result).release_agents()
    assert result.to_state().to_json() == before


@pytest.mark.parametrize("twin", list(TWIN))
@pytest.mark.parametrize("how", HOW)
async def test_releasing_a_twin_of_a_resumed_result_leaves_the_callers_state(how, twin):
    agent = approval_agent()
    interrupted = await run(agent, "run", "Delete a.txt")
    state = interrupted.to_state()
    state.approve(interrupted.interruptions[0])
    result = await run(agent, how, state)
    serialised = state.to_json()
    TWIN[twin](result).release_agents()
    assert state.to_json() == serialised
    TWIN[twin](result).release_agents()
    result.release_agents()
    assert state.to_json() == serialised


@pytest.mark.parametrize("twin", list(TWIN))
async def test_releasing_a_twin_leaves_the_original_its_tripwire(twin):
    """reviewer r051b r10: releasing a copy of a finished, unread stream whose input guardrail
    tripped drained the queue the two share, so the original no longer raised its tripwire."""
    agent, kwargs = input_tripwire()
    result = Runner.run_streamed(agent, "Go", **kwargs)
    await run_over(result)
    TWIN[twin](result).release_agents()
    with pytest.raises(InputGuardrailTripwireTriggered):
        async for _event in result.stream_events():
            pass


@pytest.mark.parametrize("twin", list(TWIN))
async def test_releasing_a_twin_leaves_the_run_data_of_the_originals_error(twin):
    """reviewer r051d 2: the output tripwire waits in a guardrail task both results share, with
    no run data yet; the twin's release filled it in with a weak last agent, so the original's
    error, kept on its own, lost its agent."""
    agent, kwargs = output_tripwire()
    result = Runner.run_streamed(agent, "Go", **kwargs)
    await run_over(result)
    TWIN[twin](result).release_agents()
    with pytest.raises(OutputGuardrailTripwireTriggered) as raised:
        async for _event in result.stream_events():
            pass
    run_data = raised.value.run_data
    agent_ref = weakref.ref(agent)
    del agent, kwargs, result, raised
    gc.collect()
    assert agent_ref() is not None
    assert run_data.last_agent is agent_ref()


async def test_releasing_the_original_leaves_the_run_data_a_twin_raises():
    """reviewer r051e 1: a copy taken during the run shares the run task, whose error (raised
    outside a turn) has no run data yet; the original's release filled it in from its own,
    released view, so the copy's error reported the original's items instead of its own."""
    turns = 0

    def enabled(context, agent):
        nonlocal turns
        turns += 1
        if turns > 1:
            raise UserError("tool config broken")
        return True

    def lookup_city(country: str) -> str:
        return "Paris"

    agent = tool_agent()
    agent.tools = [function_tool(lookup_city, is_enabled=enabled)]
    result = Runner.run_streamed(agent, "Go")
    async for _event in result.stream_events():
        break
    twin = copy.copy(result)
    await run_over(result)
    result.release_agents()
    with pytest.raises(UserError) as raised:
        async for _event in twin.stream_events():
            pass
    run_data = raised.value.run_data
    assert run_data is not None and run_data.last_agent is agent
    assert run_data.new_items is twin.new_items
