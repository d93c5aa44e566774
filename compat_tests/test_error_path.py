"""Point 9: a run that fails with MaxTurnsExceeded frees its agent once the error is dropped."""

import gc
import weakref

import pytest
from agents import RunHooks, Runner
from agents.exceptions import MaxTurnsExceeded
from support import collected, looping_agent


async def run_until_error(agent):
    try:
        await Runner.run(agent, "Loop", max_turns=2)
    except MaxTurnsExceeded as exc:
        return exc
    raise AssertionError("MaxTurnsExceeded was not raised")


async def test_agent_freed_once_error_is_dropped():
    agent = looping_agent()
    ref = weakref.ref(agent)
    error = await run_until_error(agent)
    del agent
    assert error.run_data is not None
    del error
    assert collected(ref)


async def test_run_data_items_release_their_agent():
    agent = looping_agent()
    ref = weakref.ref(agent)
    error = await run_until_error(agent)
    for item in error.run_data.new_items:
        item.release_agent()
    del agent
    gc.collect()
    assert ref() is error.run_data.last_agent
    assert all(item.agent is ref() for item in error.run_data.new_items)
    assert "looper" in str(error.run_data)


class ReleasingHooks(RunHooks):
    """Releases the streamed result's agents after every tool call, i.e. during the run."""

    result = None
    releases = 0

    async def on_tool_end(self, context, agent, tool, result):
        self.result.release_agents()
        self.releases += 1


async def test_streamed_error_after_release_during_the_run_keeps_its_details():
    """Released while the run streams, after its last turn began: the MaxTurnsExceeded that the
    stream raises still carries the agent in run_data while the caller keeps it alive."""
    agent = looping_agent()
    hooks = ReleasingHooks()
    hooks.result = Runner.run_streamed(agent, "Loop", max_turns=2, hooks=hooks)
    with pytest.raises(MaxTurnsExceeded) as caught:
        async for _ in hooks.result.stream_events():
            pass
    assert hooks.releases >= 1
    run_data = caught.value.run_data
    assert run_data is not None
    assert run_data.last_agent is agent
    assert "looper" in str(run_data)
