"""Point 15: `to_state()` after release. While the agents live, a released result converts to
the same state as before release, rooted at the run's starting agent; once that agent is gone,
`to_state()` raises AgentsException rather than root the state at another agent (here the
handoff target, which the caller still holds). Before v0.14.0 a state is rooted at the last agent,
which is still alive, so there the same state would do; but its `to_json()` fails on the released
handoff item (the cause `to-state-rooted-at-last-agent` in expectations.toml)."""

import weakref

import pytest
from agents.exceptions import AgentsException
from support import collected, run, same_name_handoff_agents


@pytest.mark.parametrize("how", ["run", "run_streamed"])
async def test_to_state_keeps_its_root_after_release_or_raises(how):
    source, target = same_name_handoff_agents()
    ref = weakref.ref(source)
    result = await run(source, how, "Route me")
    assert result.last_agent is target
    before = result.to_state().to_json()
    result.release_agents()
    assert result.to_state().to_json() == before
    del source
    assert collected(ref)
    assert result.last_agent is target
    try:
        state = result.to_state()
    except AgentsException:
        return
    assert state.to_json() == before, "to_state() rooted the state at another agent"
