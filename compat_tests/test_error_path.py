"""Point 9: a run that fails frees its agent once the error is dropped. A streamed run that fails
raises the same error whether or not its result was released first, a faithful copy of it when
read again after release, and reading it again does not make the released result pin the agent.
"""

import asyncio
import copy
import dataclasses
import gc
import json
import sys
import weakref

import openai
import pydantic
import pytest
from agents import (
    Agent,
    GuardrailFunctionOutput,
    RunHooks,
    Runner,
    function_tool,
    input_guardrail,
)
from agents.exceptions import MaxTurnsExceeded

try:
    import httpx
except ImportError:  # openai 3 (the SDK's dependency from v0.21.0) uses httpx2 instead
    import httpx2 as httpx
from support import (
    ERRORS,
    ScriptedModel,
    agent_paths,
    answering_agent,
    collected,
    failing_agent,
    looping_agent,
    raising_input,
    run_over,
    run_task,
    tool_call,
    tripping_input,
    with_guardrails,
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


FAILURES = {
    "model_error": lambda: (failing_agent(RuntimeError("model down")), {}),
    "model_error_and_input_tripwire": lambda: (
        with_guardrails(failing_agent(ValueError("model down")), input=[tripping_input]),
        {},
    ),
    "input_guardrail_raises": lambda: (
        with_guardrails(answering_agent(), input=[raising_input]),
        {},
    ),
    **{name: build for name, (build, _raises) in ERRORS.items()},  # tripwires, max turns
}


KEPT_ERRORS = {
    "model_error": (FAILURES["model_error"], RuntimeError),
    **ERRORS,  # tripwires, max turns
}


@pytest.mark.parametrize("failure", list(KEPT_ERRORS))
async def test_the_kept_error_of_a_stream_released_during_the_run_pins_no_agent(failure):
    """reviewer r051h 1: a task reads a stream, releases it at the first event and reads on to
    the run's error. The caller keeps what the task raised (asyncio keeps it on the task, with
    its traceback) and drops the result: every agent is freed."""
    build, raised = KEPT_ERRORS[failure]
    agent, kwargs = build()
    ref = weakref.ref(agent)
    result = Runner.run_streamed(agent, "Go", **kwargs)

    async def reader(stream, release):
        events = 0
        async for _event in stream:
            del _event  # this frame is in the error's traceback too: keep no event in it
            events += 1
            if events == 1:
                release()

    task = asyncio.ensure_future(reader(result.stream_events(), result.release_agents))
    await asyncio.wait([task])
    assert isinstance(task.exception(), raised)
    del agent, kwargs, result
    for _ in range(5):  # a cancelled run finishes on the loop's next turns
        await asyncio.sleep(0)
    assert collected(ref)


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


@pytest.mark.parametrize("read", ["unread", "one_event"])
@pytest.mark.parametrize("failure", list(FAILURES))
async def test_release_keeps_the_error_the_stream_raises(failure, read):
    """reviewer r051 r2 (release changed which error the stream raises: the run task's error
    gave way to the input tripwire) and reviewer r024 r1 (released before the caller reached
    it, a model's or guardrail function's error was lost: the stream ended normally). A failed
    run released once it is over, before its error was read, raises what it raises unreleased."""
    unreleased = await stream_outcome(failure, read, release=False)
    assert unreleased[-1].startswith("raised "), unreleased
    assert await stream_outcome(failure, read, release=True) == unreleased


class GatedModel(ScriptedModel):
    """A model that calls `look_up` on every turn, once `gate` is open."""

    def __init__(self, gate):
        super().__init__([tool_call("look_up", {"country": "France"})])
        self.gate = gate

    async def stream_response(self, *args, **kwargs):
        await self.gate.wait()
        async for event in super().stream_response(*args, **kwargs):
            yield event


def gated_run(gate, tripwire):
    """A streamed run held at its first turn until `gate` opens, then ended by max_turns; with
    `tripwire`, an input guardrail trips once the run is over."""
    tool_ran = asyncio.Event()

    @function_tool
    def look_up(country: str) -> str:
        """Return the capital of a country."""
        tool_ran.set()
        return "Paris"

    async def trip_late(context, agent, input):
        await tool_ran.wait()
        for _ in range(20):  # the run goes on to max_turns meanwhile
            await asyncio.sleep(0)
        return GuardrailFunctionOutput(output_info="no", tripwire_triggered=True)

    guardrails = [input_guardrail(trip_late)] if tripwire else []
    agent = Agent(name="gated", model=GatedModel(gate), tools=[look_up])
    return Runner.run_streamed(with_guardrails(agent, input=guardrails), "Go", max_turns=1)


async def first_event_release_outcome(tripwire, release):
    """How a stream read to its end ends, released (or not) at its first event."""
    gate = asyncio.Event()
    result = gated_run(gate, tripwire)
    try:
        async for _event in result.stream_events():
            if not gate.is_set():
                gate.set()  # the run goes on once this step yields
                if release:
                    result.release_agents()
    except Exception as exc:
        return f"raised {type(exc).__name__}"
    return "ended"


@pytest.mark.parametrize("tripwire", [True, False], ids=["tripwire_then_max_turns", "max_turns"])
async def test_a_stream_released_during_the_run_raises_the_error_its_read_found(tripwire):
    """reviewer r051g 1: the read found an input tripwire, then the run went on to max_turns.
    The release made at the first event must not make the read raise the later error."""
    unreleased = await first_event_release_outcome(tripwire, release=False)
    assert unreleased.startswith("raised "), unreleased
    assert await first_event_release_outcome(tripwire, release=True) == unreleased


async def cancelled_reader_outcome(release):
    """How a reader ends that is cancelled while it waits for the second event of a run that
    then fails, released (or not) at the first event."""
    gate, first = asyncio.Event(), asyncio.Event()
    result = gated_run(gate, tripwire=False)

    async def reader():
        try:
            async for _event in result.stream_events():
                if not first.is_set():
                    first.set()
                    if release:
                        result.release_agents()
        except Exception as exc:
            return f"raised {type(exc).__name__}"
        return "ended"

    task = asyncio.ensure_future(reader())
    await asyncio.wait_for(first.wait(), 10)
    for _ in range(3):  # the reader goes back to waiting for the next event
        await asyncio.sleep(0)
    task.cancel()
    gate.set()
    try:
        return await asyncio.wait_for(task, 10)
    except asyncio.CancelledError:
        return "cancelled"
    except asyncio.TimeoutError:
        return "hangs"


async def test_a_cancelled_reader_of_a_released_stream_ends_as_unreleased():
    """reviewer r051g 2: a reader cancelled while it waits ends as it does without a release
    (v0.5.1 returns), not with the error the run ends with later."""
    unreleased = await cancelled_reader_outcome(release=False)
    assert await cancelled_reader_outcome(release=True) == unreleased


class SlottedError(Exception):
    __slots__ = ("code",)

    def __init__(self, code):
        super().__init__(f"code {code}")
        self.code = code


def validation_error():
    class Capital(pydantic.BaseModel):
        population: int

    try:
        Capital(population="many")
    except pydantic.ValidationError as exc:
        return exc
    raise AssertionError("pydantic accepted it")


def exception_group():
    try:
        raise ValueError("inner")
    except ValueError as inner:
        return ExceptionGroup("model errors", [inner])  # noqa: F821 (Python 3.11+)


REQUEST = httpx.Request("POST", "https://api.example/v1/responses")
MODEL_ERRORS = {
    "file_not_found": lambda: OSError(2, "No such file", "/x"),
    "connection_reset": lambda: ConnectionResetError(104, "reset"),
    "unicode_decode": lambda: UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
    "json_decode": lambda: json.JSONDecodeError("Expecting value", "x", 0),
    "key_error": lambda: KeyError("k"),
    "openai_internal_server_error": lambda: openai.InternalServerError(
        "boom", response=httpx.Response(500, request=REQUEST), body=None
    ),
    "openai_connection_error": lambda: openai.APIConnectionError(request=REQUEST),
    "httpx_read_timeout": lambda: httpx.ReadTimeout("timed out", request=REQUEST),
    "pydantic_validation_error": validation_error,
    "slotted_subclass": lambda: SlottedError(7),
    "exception_group": exception_group,
}
ATTRIBUTES = (
    "args", "errno", "strerror", "filename", "filename2", "encoding", "object", "start", "end",
    "reason", "msg", "doc", "pos", "lineno", "colno", "code", "message", "body", "request",
    "response", "status_code",
)  # fmt: skip


def described(exc):
    """Everything a caller can read of an exception, but its traceback, cause and context."""
    seen = {"type": type(exc), "str": str(exc), "repr": repr(exc)}
    seen.update((name, getattr(exc, name, "<none>")) for name in ATTRIBUTES)
    if isinstance(exc, pydantic.ValidationError):
        seen["errors"] = exc.errors()
    if hasattr(exc, "exceptions"):  # an exception group: its inner exceptions, described
        seen["exceptions"] = [described(inner) for inner in exc.exceptions]
    return seen


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(
            name,
            marks=pytest.mark.skipif(
                name == "exception_group" and sys.version_info < (3, 11),
                reason="ExceptionGroup needs Python 3.11",
            ),
        )
        for name in MODEL_ERRORS
    ],
)
async def test_released_stream_raises_a_faithful_copy_of_the_error(error):
    """reviewer r051 r3: the copy of the run's error that a released result keeps (and raises
    when its stream is read again) lost an OSError's filename, a UnicodeDecodeError's fields and
    a slotted subclass's slots. It must read as the error the caller caught: same class, str(),
    repr(), args and attributes; only its traceback, cause and context may go."""
    result = Runner.run_streamed(failing_agent(MODEL_ERRORS[error]()), "Go")
    with pytest.raises(Exception) as first:
        async for _event in result.stream_events():
            pass
    result.release_agents()
    with pytest.raises(Exception) as again:
        async for _event in result.stream_events():
            pass
    assert described(again.value) == described(first.value)


async def read_again(result, agent):
    """A later reader of a kept result, e.g. a handler that logs its outcome for `agent`: its
    frame (with `agent` in it) is in the traceback of what the stream raises. On 0.0.19-0.2.11
    a stream read again after a tripwire raises CancelledError (its run task was cancelled)."""
    try:
        async for _event in result.stream_events():
            pass
    except (Exception, asyncio.CancelledError) as exc:
        return f"{agent.name}: {type(exc).__name__}"
    return f"{agent.name}: ended"


REREAD = ["model_error", "input_tripwire", "output_tripwire", "max_turns"]


@pytest.mark.parametrize("reader", ["result", "copy", "replace"])
@pytest.mark.parametrize("read", ["read_before_release", "unread"])
@pytest.mark.parametrize("failure", REREAD)
async def test_reading_a_released_failed_stream_again_pins_no_agent(failure, read, reader):
    """reviewer r051 r1 (reading the stream after release stored a new MaxTurnsExceeded or
    tripwire whose run_data held the last agent), reviewer r051 r7 (raising the stored copy
    gave it the reader's traceback, whose frames hold the reader's locals) and reviewer r051b r15
    (a copy or `dataclasses.replace()` of the released result raised the stored copy itself). A
    released result of a failed stream, read again (itself or a twin of it) by a reader holding
    the agent, reaches no agent afterwards."""
    agent, kwargs = FAILURES[failure]()
    ref = weakref.ref(agent)
    result = Runner.run_streamed(agent, "Go", **kwargs)
    if read == "read_before_release":
        assert (await read_to_the_end(result.stream_events())).startswith("raised ")
    await run_over(result)  # a tripwire read may come before the run task has finished
    result.release_agents()
    twin = {"result": lambda r: r, "copy": copy.copy, "replace": dataclasses.replace}[reader]
    outcome = await read_again(twin(result), agent)
    assert outcome.startswith(f"{agent.name}: ") and not outcome.endswith("ended"), outcome
    paths = agent_paths(result)
    assert not paths, "reachable after reading the released stream again:\n" + "\n".join(paths)
    del agent
    assert collected(ref)


def error_details(exc):
    """What an error says of the run it ended (None for a release without run_data)."""
    details = getattr(exc, "run_data", None)
    if details is None:
        return type(exc).__name__, None
    return type(exc).__name__, len(details.new_items), len(details.raw_responses)


@pytest.mark.parametrize("failure", REREAD)
async def test_released_unread_failed_stream_keeps_its_error_details(failure):
    """reviewer r051c c9b/c9d: a failed stream nobody read, released once its agent was already
    collected (a per-request agent), raised its MaxTurnsExceeded or tripwire with run_data=None,
    where the unreleased one reports the run's items and responses."""
    seen = {}
    for release in (False, True):
        agent, kwargs = FAILURES[failure]()
        result = Runner.run_streamed(agent, "Go", **kwargs)
        await run_over(result)
        del agent, kwargs
        if release:
            result.release_agents()
        gc.collect()
        with pytest.raises(Exception) as raised:
            async for _event in result.stream_events():
                pass
        seen[release] = error_details(raised.value)
    assert seen[True] == seen[False]
