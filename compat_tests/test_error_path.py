"""Point 9: a run that fails with MaxTurnsExceeded frees its agent once the error is dropped."""

import gc
import weakref

from agents import Runner
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
