"""Point 7: Runner.run_sync follows the same contract."""

import gc
import weakref

import pytest
from agents import Runner
from agents.exceptions import AgentsException
from support import answering_agent, collected


def test_run_sync_keeps_agent_until_release():
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = Runner.run_sync(agent, "Capital of France?")
    del agent
    gc.collect()
    assert result.last_agent is ref() is not None


def test_run_sync_release_agents_frees_agent():
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = Runner.run_sync(agent, "Capital of France?")
    result.release_agents()
    del agent
    assert collected(ref)
    with pytest.raises(AgentsException):
        _ = result.last_agent


def test_run_sync_result_freed_out_of_scope():
    agent = answering_agent()
    ref = weakref.ref(agent)
    Runner.run_sync(agent, "Capital of France?")
    del agent
    assert collected(ref)
