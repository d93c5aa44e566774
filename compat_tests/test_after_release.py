"""Point 11: released results, items and unread stream events stay usable: printing, fields,
copies, pickling."""

import asyncio
import copy
import dataclasses
import gc
import pickle
import weakref

import pytest
from agents import Agent, Runner
from agents.exceptions import MaxTurnsExceeded
from support import (
    ScriptedModel,
    answering_agent,
    collected,
    handoff_agents,
    looping_agent,
    message,
    run,
    run_over,
    tool_agent,
    tool_call,
)

OPERATIONS = {
    "repr": repr,
    "str": str,
    "asdict": dataclasses.asdict,
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    "pickle": lambda obj: pickle.loads(pickle.dumps(obj)),
}
# Results also keep `dataclasses.replace()` working after release (upstream's __post_init__ takes
# a weak reference of the released None from v0.6.0 on); items do not promise it.
RESULT_ONLY = {"replace": dataclasses.replace}
OPERATIONS_ON_RESULTS = {**OPERATIONS, **RESULT_ONLY}


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
@pytest.mark.parametrize("operation", OPERATIONS_ON_RESULTS)
async def test_result_after_release(operation, agent_gone):
    results, _keep = await released_results(agent_gone)
    for result in results:
        OPERATIONS_ON_RESULTS[operation](result)
        assert result.final_output


@pytest.mark.parametrize("operation", ["repr", "str", "copy", "replace"])
async def test_streamed_result_after_release(operation):
    source, _ = handoff_agents()
    result = Runner.run_streamed(source, "Route me")
    async for _event in result.stream_events():
        pass
    result.release_agents()
    del source, _
    gc.collect()
    OPERATIONS_ON_RESULTS[operation](result)
    assert result.final_output == "handled"


@pytest.mark.parametrize("operation", ["copy", "deepcopy"])
async def test_copies_of_released_objects_read_the_agent_while_it_lives(operation):
    """reviewer r024g 1: a copy of a released result or item is released too, and reads the
    agent while something else holds it, as the original does (and upstream's copies do)."""
    source, target = handoff_agents()
    result = await Runner.run(source, "Route me")
    result.release_agents()
    item = result.new_items[0]
    assert OPERATIONS[operation](item).agent is item.agent is source
    assert copy.copy(result).last_agent is result.last_agent is target


async def test_release_is_idempotent():
    results, _keep = await released_results(agent_gone=True)
    for result in results:
        result.release_agents()
        result.release_agents(release_new_items=False)
        for item in result.new_items:
            item.release_agent()
            assert item.agent is None


@pytest.mark.parametrize("agent_gone", [False, True], ids=["agent_alive", "agent_gone"])
@pytest.mark.parametrize("operation", OPERATIONS)
async def test_unread_events_after_release(operation, agent_gone):
    """reviewer r051 r5: the events a caller did not read before release_agents() are read
    after it, every one, as released copies: an agent update names its agent while the caller
    keeps it and None once it is gone, and each event prints, copies and pickles. (A caller who
    read one event and closed the stream leaves no events to read on v0.8.0 and later: closing
    drains the queue. So the stream is not read at all before the release.)"""
    source, target = handoff_agents()
    result = Runner.run_streamed(source, "Route me")
    await run_over(result)
    result.release_agents()
    keep = [None, None] if agent_gone else [source, target]
    del source, target
    gc.collect()
    events = [event async for event in result.stream_events()]
    updates = [e for e in events if e.type == "agent_updated_stream_event"]
    assert [e.new_agent for e in updates] == keep
    for event in events:
        OPERATIONS[operation](event)
        assert event.type
    assert result.final_output == "handled"


def interrupted_by_an_agent_tool():
    helper = answering_agent("helper")
    model = ScriptedModel([tool_call("ask_helper", {"input": "Capital?"})], [message("Paris")])
    tool = helper.as_tool(tool_name="ask_helper", tool_description="Ask.", needs_approval=True)
    return Agent(name="orchestrator", model=model, tools=[tool]), helper


async def other_released_result(kind):
    """A released result of a streamed run that failed, of a stream the caller stopped reading,
    or of a run interrupted for approval of an agent tool call; with its agents collected."""
    if kind == "failed_stream":
        keep = [looping_agent()]
        result = Runner.run_streamed(keep[0], "Loop", max_turns=2)
        with pytest.raises(MaxTurnsExceeded):
            async for _event in result.stream_events():
                pass
    elif kind == "unread_stream":
        keep = list(handoff_agents())
        result = await run(keep[0], "run_streamed_break")
    else:
        keep = list(interrupted_by_an_agent_tool())
        result = await Runner.run(keep[0], "Ask")
        assert result.interruptions
    result.release_agents()
    refs = [weakref.ref(agent) for agent in keep]
    del keep
    await asyncio.sleep(0)
    assert collected(*refs)
    return result


RESULT_OPERATIONS = {
    "repr": repr,
    "str": str,
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    "pickle": OPERATIONS["pickle"],
    **RESULT_ONLY,
}
# A streamed result neither deep-copies nor pickles, released or not, in any release (its event
# queues and tasks); printing, copy.copy() and dataclasses.replace() are what it promises.
STREAMED_OPERATIONS = ["repr", "str", "copy", "replace"]


@pytest.mark.parametrize(
    ("operation", "kind"),
    [(op, kind) for kind in ("failed_stream", "unread_stream") for op in STREAMED_OPERATIONS]
    + [(op, "interrupted") for op in RESULT_OPERATIONS],
)
async def test_other_results_after_release(operation, kind):
    """reviewer r024 r6: released results of a failed stream, of an unread handoff stream and
    of a run interrupted for approval of an agent tool call print and copy (the last also
    deep-copies and pickles) once their agents are gone."""
    result = await other_released_result(kind)
    RESULT_OPERATIONS[operation](result)
