"""Point 12: release is atomic for readers. At every step of `release_agents()` and
`release_agent()` a reader (another thread; on a free-threaded build, any time) still gets the
agent the caller holds: `item.agent`, a handoff's `source_agent`/`target_agent`, `last_agent`.

Deterministic, no thread race: a `sys.settrace` hook reads every agent field at each line of
every function the release runs (and as each returns), and records what differs."""

import sys
from contextlib import contextmanager

import pytest
from agents import Runner
from support import handoff_agents


def agent_fields(result, items):
    """Everything a reader can ask: each item's agent (and a handoff's source and target), and
    the result's last agent. A raised exception is what the reader sees, too."""
    seen = []
    for item in items:
        seen.append(item.agent)
        if item.type == "handoff_output_item":
            seen += [item.source_agent, item.target_agent]
    if result is not None:
        try:
            seen.append(result.last_agent)
        except Exception as exc:
            seen.append(exc)
    return seen


def describe(seen):
    return [getattr(x, "name", x) for x in seen]


@contextmanager
def reader_at_every_line(read, expected):
    """Run the block with a reader at every line event (and return) of the code it calls."""
    problems = []

    def tracer(frame, event, arg):
        if event in ("line", "return"):
            seen = read()
            if len(seen) != len(expected) or any(a is not b for a, b in zip(seen, expected)):
                where = f"{frame.f_code.co_name}() line {frame.f_lineno} ({event})"
                problems.append(f"{where}: {describe(seen)}")
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        yield problems
    finally:
        sys.settrace(previous)


async def handoff_run(streamed):
    source, target = handoff_agents()
    if streamed:
        result = Runner.run_streamed(source, "Route me")
        async for _ in result.stream_events():
            pass
    else:
        result = await Runner.run(source, "Route me")
    assert {item.type for item in result.new_items} >= {"handoff_output_item"}
    return (source, target), result


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "streamed"])
async def test_readers_see_the_agents_throughout_release_agents(streamed):
    agents, result = await handoff_run(streamed)
    items = list(result.new_items)
    expected = agent_fields(result, items)
    assert {getattr(x, "name", None) for x in expected} == {"source", "target"}

    with reader_at_every_line(lambda: agent_fields(result, items), expected) as problems:
        result.release_agents()
    assert not problems, "\n".join(problems[:5])
    assert describe(agent_fields(result, items)) == describe(expected)
    del agents


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "streamed"])
async def test_readers_see_the_agents_throughout_item_release_agent(streamed):
    agents, result = await handoff_run(streamed)
    items = list(result.new_items)
    del result
    expected = agent_fields(None, items)
    assert None not in expected

    with reader_at_every_line(lambda: agent_fields(None, items), expected) as problems:
        for item in items:
            item.release_agent()
    assert not problems, "\n".join(problems[:5])
    assert describe(agent_fields(None, items)) == describe(expected)
    del agents
