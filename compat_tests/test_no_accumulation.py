"""Point 10: many runs in one long-lived loop leave no agents behind."""

import gc
import weakref

from agents import Runner
from support import alive, answering_agent

# Any retained run keeps its agent alive; twenty runs show it as well as two hundred.
RUNS = 20


async def test_dropped_results_leave_no_live_agents():
    refs = []
    for _ in range(RUNS):
        agent = answering_agent()
        refs.append(weakref.ref(agent))
        await Runner.run(agent, "Capital of France?")
        del agent
    gc.collect()
    assert alive(refs) == 0


async def test_kept_and_released_results_leave_no_live_agents():
    refs, history = [], []
    for _ in range(RUNS):
        agent = answering_agent()
        refs.append(weakref.ref(agent))
        result = await Runner.run(agent, "Capital of France?")
        result.release_agents()
        history.append(result)
        del agent, result
    gc.collect()
    assert alive(refs) == 0
