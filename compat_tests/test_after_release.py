"""Point 11: released results and items stay usable: printing, fields, copies, pickling."""

import copy
import dataclasses
import gc
import pickle

import pytest
from agents import Runner
from support import handoff_agents, tool_agent

OPERATIONS = {
    "repr": repr,
    "str": str,
    "asdict": dataclasses.asdict,
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    "pickle": lambda obj: pickle.loads(pickle.dumps(obj)),
}


async def released_results(agent_gone: bool):
    """A handoff run and a tool run, released; with or without their agents collected."""
    source, _ = handoff_agents()
    tooler = tool_agent()
    results = [await Runner.run(source, "Route me"), await Runner.run(tooler, "Capitals?")]
    for result in results:
        result.release_agents()
    if agent_gone:
        del source, tooler, _
        gc.collect()
        assert all(item.agent is None for r in results for item in r.new_items)
    return results, (None if agent_gone else (source, tooler))


@pytest.mark.parametrize("agent_gone", [False, True], ids=["agent_alive", "agent_gone"])
@pytest.mark.parametrize("operation", OPERATIONS)
async def test_items_after_release(operation, agent_gone):
    results, _keep = await released_results(agent_gone)
    items = [item for result in results for item in result.new_items]
    for item in items:
        OPERATIONS[operation](item)
        assert item.raw_item is not None
        assert item.type


@pytest.mark.parametrize("agent_gone", [False, True], ids=["agent_alive", "agent_gone"])
@pytest.mark.parametrize("operation", OPERATIONS)
async def test_result_after_release(operation, agent_gone):
    results, _keep = await released_results(agent_gone)
    for result in results:
        OPERATIONS[operation](result)
        assert result.final_output


@pytest.mark.parametrize("operation", ["repr", "str", "copy"])
async def test_streamed_result_after_release(operation):
    source, _ = handoff_agents()
    result = Runner.run_streamed(source, "Route me")
    async for _event in result.stream_events():
        pass
    result.release_agents()
    del source, _
    gc.collect()
    OPERATIONS[operation](result)
    assert result.final_output == "handled"


async def test_release_is_idempotent():
    results, _keep = await released_results(agent_gone=True)
    for result in results:
        result.release_agents()
        result.release_agents(release_new_items=False)
        for item in result.new_items:
            item.release_agent()
            assert item.agent is None
