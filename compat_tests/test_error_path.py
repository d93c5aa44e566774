"""Point 9: a run that fails frees its agent once the error is dropped. A streamed run that fails
raises the same error whether or not its result was released first."""

import asyncio
import gc
import weakref

import pytest
from agents import (
    RunHooks,
    Runner,
)
from agents.exceptions import MaxTurnsExceeded
from support import (
    ERRORS,
    answering_agent,
    collected,
    failing_agent,
    looping_agent,
    raising_input,
    run_over,
    run_task,
    tripping_input,
)


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


def guarded(agent, input=(), output=()):
    agent.input_guardrails = list(input)
    agent.output_guardrails = list(output)
    return agent, {}


FAILURES = {
    "model_error": lambda: (failing_agent(RuntimeError("model down")), {}),
    "model_error_and_input_tripwire": lambda: guarded(
        failing_agent(ValueError("model down")), input=[tripping_input]
    ),
    "input_guardrail_raises": lambda: guarded(answering_agent(), input=[raising_input]),
    **{name: build for name, (build, _raises) in ERRORS.items()},  # tripwires, max turns
}


async def read_to_the_end(stream):
    """How reading `stream` on ends: the exception it raises, or that it ends."""
    try:
        async for _event in stream:
            pass
    except Exception as exc:
        return f"raised {type(exc).__name__}: {exc}"
    return "ended"


async def stream_outcome(failure, read, release):
    """What a caller sees of a failed streamed run: the first event (`read="one_event"`), then,
    once the run is over and the result released (or not), how the rest of the stream ends."""
    agent, kwargs = FAILURES[failure]()
    result = Runner.run_streamed(agent, "Go", **kwargs)
    stream = result.stream_events()
    seen = []
    if read == "one_event":
        seen.append(type(await stream.__anext__()).__name__)
        # From v0.19.0 a run with tool calls waits for its reader: released while it goes on.
        await asyncio.wait([run_task(result)], timeout=0.5)
    else:
        await run_over(result)
    if release:
        result.release_agents()
    try:
        seen.append(await asyncio.wait_for(read_to_the_end(stream), 10))
    except asyncio.TimeoutError:
        seen.append("hangs")
    return seen


@pytest.mark.parametrize("read", ["unread"])
@pytest.mark.parametrize("failure", list(FAILURES))
async def test_release_keeps_the_error_the_stream_raises(failure, read):
    """reviewer r051 r2 (release changed which error the stream raises: the run task's error
    gave way to the input tripwire) and reviewer r024 r1 (released before the caller reached
    it, a model's or guardrail function's error was lost: the stream ended normally). A failed
    run released once it is over, before its error was read, raises what it raises unreleased."""
    unreleased = await stream_outcome(failure, read, release=False)
    assert unreleased[-1].startswith("raised "), unreleased
    assert await stream_outcome(failure, read, release=True) == unreleased
