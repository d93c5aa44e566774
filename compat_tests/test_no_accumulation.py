"""Point 10: many runs in one long-lived loop leave no agents behind."""

import asyncio
import gc
import weakref

from agents import Runner
from support import alive, answering_agent, handoff_agents, looping_agent, run

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


async def test_concurrent_streamed_results_released_leave_no_live_agents():
    """reviewer r051 r9: streamed runs going on at once, some read in part (one event) and left
    to finish, some failing with MaxTurnsExceeded, then all released and kept."""

    async def partial():
        source, target = handoff_agents()
        result = await run(source, "run_streamed_break")
        return result, [weakref.ref(source), weakref.ref(target)]

    async def failing():
        agent = looping_agent()
        result = Runner.run_streamed(agent, "Loop", max_turns=2)
        try:
            async for _event in result.stream_events():
                pass
        except Exception:
            pass
        return result, [weakref.ref(agent)]

    runs = await asyncio.gather(*[partial() for _ in range(10)], *[failing() for _ in range(10)])
    history = [result for result, _ in runs]
    refs = [ref for _, run_refs in runs for ref in run_refs]
    del runs
    for result in history:
        result.release_agents()
    del result
    gc.collect()
    assert alive(refs) == 0
    assert len(history) == 20
