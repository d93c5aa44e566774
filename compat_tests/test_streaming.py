"""Point 6: streamed runs (events drained, or not) follow the same contract. A release while the
run goes on takes full effect when the run ends; a release after `cancel()` leaves how the stream
ends; a release handed to the event loop from another thread, or made in a later event loop, or
outside one, is safe."""

import asyncio
import copy
import dataclasses
import gc
import logging
import weakref

import pytest
from agents import Runner
from agents.exceptions import AgentsException
from support import (
    agent_paths,
    answering_agent,
    collected,
    failing_agent,
    handoff_agents,
    raising_input,
    run_over,
    run_task,
    tool_agent,
    tripping_input,
    with_guardrails,
)


async def run_streamed(agent):
    result = Runner.run_streamed(agent, "Capital of France?")
    async for _ in result.stream_events():
        pass
    return result


async def test_streamed_result_keeps_agent_until_release():
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = await run_streamed(agent)
    del agent
    gc.collect()
    assert result.last_agent is ref() is not None
    assert all(item.agent is ref() for item in result.new_items)


async def test_streamed_release_agents_frees_agent():
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = await run_streamed(agent)
    result.release_agents()
    del agent
    assert collected(ref)
    with pytest.raises(AgentsException):
        _ = result.last_agent


async def test_streamed_handoff_release_agents_frees_both():
    source, target = handoff_agents()
    refs = weakref.ref(source), weakref.ref(target)
    result = await run_streamed(source)
    assert result.last_agent.name == "target"
    result.release_agents()
    del source, target
    assert collected(*refs)


async def test_streamed_result_freed_after_gc():
    agent = answering_agent()
    ref = weakref.ref(agent)
    await run_streamed(agent)
    del agent
    await asyncio.sleep(0)
    assert collected(ref)


async def test_streamed_result_freed_by_reference_counting_alone():
    agent = answering_agent()
    ref = weakref.ref(agent)
    result = await run_streamed(agent)
    await asyncio.sleep(0)
    gc.collect()
    gc.disable()
    del agent, result
    await asyncio.sleep(0)
    assert ref() is None


def described(event):
    return type(event).__name__, getattr(event, "name", None)


DURING = {
    "plain": lambda: [answering_agent()],
    "tools": lambda: [tool_agent()],
    "handoff": lambda: list(handoff_agents()),
}


async def released_during_the_run(agent):
    """A streamed result whose caller read one event, stopped, and released at once, while the
    run goes on (the usual early exit)."""
    result = Runner.run_streamed(agent, "Route me")
    async for _event in result.stream_events():
        break
    del _event
    assert not run_task(result).done(), "the release must come while the run goes on"
    result.release_agents()
    return result


@pytest.mark.parametrize("scenario", list(DURING))
async def test_release_during_the_run_takes_full_effect_when_the_run_ends(scenario):
    """reviewer r051 r4 and reviewer r051b r11: a caller reads one event, stops, and releases at
    once, while the run goes on (the usual early exit). The run must not undo the release: once
    it ends, with no second call, no agent is reachable from the result and every one is freed,
    and the run still ends as it would."""
    agents = DURING[scenario]()
    refs = [weakref.ref(agent) for agent in agents]
    result = await released_during_the_run(agents[0])
    await run_over(result)
    assert not agent_paths(result)
    del agents
    for _ in range(5):  # the cleanups the release started (v0.14.0 on) run on the loop's turns
        await asyncio.sleep(0)
    assert collected(*refs)
    assert result.final_output


@pytest.mark.parametrize("scenario", list(DURING))
async def test_release_during_the_run_is_over_when_the_stream_is_read_to_its_end(scenario):
    """reviewer r051f 1: a caller releases at the first event and reads on to the end. When
    `stream_events()` returns, the run is over and so is the release: with no await in
    between, no agent is reachable from the result and every one is freed."""
    agents = DURING[scenario]()
    refs = [weakref.ref(agent) for agent in agents]
    result = Runner.run_streamed(agents[0], "Route me")
    events = 0
    async for _event in result.stream_events():
        events += 1
        if events == 1:
            result.release_agents()
    del _event
    assert events > 1, "the release must come while the run goes on"
    assert not agent_paths(result)
    del agents
    assert collected(*refs)
    assert result.final_output


@pytest.mark.parametrize("twin", ["copy", "replace"])
async def test_a_twin_of_a_stream_released_during_the_run_is_released_when_it_ends(twin):
    """reviewer r024c 2: a copy or `dataclasses.replace()` of a result released while its run
    goes on is a released result too, so the run's end finishes its release as it finishes the
    original's: both are kept, and once the run ends neither reaches an agent."""
    agents = list(handoff_agents())
    refs = [weakref.ref(agent) for agent in agents]
    result = await released_during_the_run(agents[0])
    kept = {"copy": copy.copy, "replace": dataclasses.replace}[twin](result)
    await run_over(result)
    assert not agent_paths(kept)
    del agents
    for _ in range(5):
        await asyncio.sleep(0)
    assert collected(*refs)
    with pytest.raises(AgentsException):
        _ = kept.last_agent


async def stream_after_cancel(release, turns):
    """How `stream_events()` ends for a run cancelled at once, read after `turns` loop turns
    and a release (or none)."""
    result = Runner.run_streamed(tool_agent(), "Go")
    await asyncio.sleep(0)
    result.cancel()
    for _ in range(turns):
        await asyncio.sleep(0)
    if release:
        result.release_agents()
    try:
        count = len([event async for event in result.stream_events()])
    except BaseException as exc:  # CancelledError is a BaseException
        return f"raised {type(exc).__name__}"
    return f"ended after {count} events"


@pytest.mark.parametrize("turns", [0, 3])
async def test_release_after_cancel_keeps_how_the_stream_ends(turns):
    """reviewer r051b r12: released after `cancel()`, the stream ended quietly where the
    unreleased one raises CancelledError (or the other way round)."""
    unreleased = await stream_after_cancel(release=False, turns=turns)
    assert await stream_after_cancel(release=True, turns=turns) == unreleased


async def test_release_handed_to_the_loop_from_another_thread_while_reading():
    """reviewer r051 r8 (withdrawn: a release from a worker thread races a reader on the loop,
    as the release_agents() docstring says). What is promised: a release the worker hands to
    the loop (`loop.call_soon_threadsafe(result.release_agents)`) between two reads leaves the
    reader every event once, in order, and the stream ends as it would."""
    twin = Runner.run_streamed(handoff_agents()[0], "Route me")
    expected = [described(event) async for event in twin.stream_events()]
    source, _target = handoff_agents()
    result = Runner.run_streamed(source, "Route me")
    await run_over(result)
    loop = asyncio.get_running_loop()
    seen = []
    async for event in result.stream_events():
        seen.append(described(event))
        if len(seen) == 1:
            await asyncio.to_thread(loop.call_soon_threadsafe, result.release_agents)
            await asyncio.sleep(0)  # the release runs here, between two reads
    assert seen == expected
    assert result.final_output == "handled"


def answerer_with(input_guardrail):
    return lambda: with_guardrails(answering_agent(), input=[input_guardrail])


async def read_all(result):
    async for _event in result.stream_events():
        pass


async def read_one(result):
    async for _event in result.stream_events():
        break


async def cancel_and_break(result):
    async for _event in result.stream_events():
        result.cancel()
        break


async def cancel_and_read_on(result):
    async for _event in result.stream_events():
        result.cancel()


async def read_none(result):
    pass


BATTERY = {
    "read_none": (answering_agent, read_none),
    "tools_read_one": (tool_agent, read_one),
    "model_error_read_all": (lambda: failing_agent(RuntimeError("boom")), read_all),
    "model_error_read_none": (lambda: failing_agent(RuntimeError("boom")), read_none),
    "cancel_and_break": (tool_agent, cancel_and_break),
    "cancel_and_read_on": (tool_agent, cancel_and_read_on),
    "input_tripwire_read_all": (answerer_with(tripping_input), read_all),
    "input_tripwire_read_none": (answerer_with(tripping_input), read_none),
    "input_guardrail_raises_read_all": (answerer_with(raising_input), read_all),
    "input_guardrail_raises_read_none": (answerer_with(raising_input), read_none),
}


@pytest.mark.parametrize("scenario", list(BATTERY))
async def test_released_stream_frees_agent_and_leaves_nothing_to_log(scenario, caplog):
    """reviewer r024 r3: streamed runs read in full, in part or not at all, cancelled, failed
    (a model error, a tripwire, a guardrail that raises). Released once the run is over, the
    kept result frees the agent, still prints, and asyncio logs nothing (no task exception
    "never retrieved") when the result goes."""
    make, drive = BATTERY[scenario]
    agent = make()
    ref = weakref.ref(agent)
    result = Runner.run_streamed(agent, "Go")
    caplog.set_level(logging.WARNING, logger="asyncio")
    try:
        await drive(result)
    except Exception:
        pass  # the failed runs' error, which the caller has seen
    await run_over(result)
    result.release_agents()
    for _ in range(20):
        await asyncio.sleep(0)
    del agent
    assert collected(ref)
    assert str(result)
    del result
    gc.collect()
    for _ in range(5):
        await asyncio.sleep(0)
    assert not [r.getMessage() for r in caplog.records if r.name == "asyncio"]


@pytest.mark.parametrize("where", ["later_loop", "no_loop"])
@pytest.mark.parametrize("read", ["read_all", "read_one", "unread"])
def test_release_in_a_later_event_loop(read, where):
    """reviewer r024 r4: a streamed result kept past its run's `asyncio.run()` and released in
    a later one (a cache swept by a later job), or outside any event loop: release_agents()
    raises nothing and frees the agent. reviewer r024i 2: also when the stream was never read,
    so that its cleanup (which release can start only on the run's own loop) has not run."""

    async def first():
        agent = answering_agent()
        result = Runner.run_streamed(agent, "Go")
        if read != "unread":
            await (read_all if read == "read_all" else read_one)(result)
        await run_over(result)
        return result, weakref.ref(agent)

    async def later(result):
        result.release_agents()

    result, ref = asyncio.run(first())
    if where == "later_loop":
        asyncio.run(later(result))
    result.release_agents()  # (again) outside any event loop
    assert collected(ref)
    assert result.final_output == "Paris"


async def test_release_of_an_unread_stream_runs_its_sandbox_cleanup(monkeypatch):
    """reviewer r024 r2 (the cleanup that release_agents() starts can be cancelled when the
    event loop shuts down right after release, the end of `asyncio.run()`; documented: await a
    turn of the loop after release if the sandbox must be torn down). What is promised: a stream
    the caller stopped reading, released once the run is over, has its sandbox cleanup started
    by the next turn of the loop, and it runs to its end."""
    from agents.sandbox.runtime import SandboxRuntime

    log = []
    original = SandboxRuntime.cleanup

    async def cleanup(self):
        log.append("start")
        await asyncio.sleep(0.01)  # a cleanup that awaits something (closing a session)
        outcome = await original(self)
        log.append("done")
        return outcome

    monkeypatch.setattr(SandboxRuntime, "cleanup", cleanup)
    result = Runner.run_streamed(answering_agent(), "Go")
    stream = result.stream_events()  # held, as a caller's loop that broke out still holds it
    await stream.__anext__()
    await run_over(result)
    assert log == []
    result.release_agents()
    await asyncio.sleep(0)
    assert log == ["start"]
    await asyncio.sleep(0.1)
    assert log == ["start", "done"]
    await stream.aclose()
    assert log == ["start", "done"], "the cleanup ran twice"
