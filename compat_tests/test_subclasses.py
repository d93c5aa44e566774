"""Point 13: dataclass subclasses that re-declare an agent field still define (the field has no
default), construct, keep their agent until release, and release it; one that gives the field a
default still reads the live agent after release. A `@dataclass(slots=True)` item subclass (its
fields are all slots) still copies, deep-copies and pickles after release (where there is one).

`@dataclass class MyItem(MessageOutputItem): agent: Agent[Any]` is how a caller narrows or
documents a field; the release API must not make class-level access look like a default, nor a
subclass's default hide the agent."""

import copy
import dataclasses
import gc
import pickle
import sys
import weakref
from typing import Any

import pytest
from agents import (
    Agent,
    HandoffOutputItem,
    MessageOutputItem,
    Runner,
    RunResult,
    RunResultStreaming,
)
from agents.exceptions import AgentsException
from support import answering_agent, collected, handoff_agents, message

HANDOFF_RAW = {"type": "function_call_output", "call_id": "call_1", "output": "{}"}


def declare_items():
    @dataclasses.dataclass
    class MyMessageItem(MessageOutputItem):
        agent: Agent[Any]

    @dataclasses.dataclass
    class MyHandoffItem(HandoffOutputItem):
        agent: Agent[Any]
        source_agent: Agent[Any]
        target_agent: Agent[Any]

    return MyMessageItem, MyHandoffItem


def declare_result(streamed):
    if streamed:

        @dataclasses.dataclass
        class MyStreamedResult(RunResultStreaming):
            current_agent: Agent[Any]

        return MyStreamedResult, "current_agent"

    @dataclasses.dataclass
    class MyResult(RunResult):
        _last_agent: Agent[Any]

    return MyResult, "_last_agent"


def without_default(cls, *names):
    fields = {f.name: f for f in dataclasses.fields(cls)}
    return all(
        fields[n].default is dataclasses.MISSING
        and fields[n].default_factory is dataclasses.MISSING
        for n in names
    )


def kept_items():
    """A message item and a handoff item of the subclasses, and the refs of their agents."""
    MyMessageItem, MyHandoffItem = declare_items()
    agent = answering_agent()
    source, target = handoff_agents()
    items = [
        MyMessageItem(agent=agent, raw_item=message("Paris")),
        MyHandoffItem(agent=source, raw_item=HANDOFF_RAW, source_agent=source, target_agent=target),
    ]
    return items, [weakref.ref(a) for a in (agent, source, target)]


def test_item_subclasses_define_with_required_agent_fields():
    MyMessageItem, MyHandoffItem = declare_items()
    assert without_default(MyMessageItem, "agent")
    assert without_default(MyHandoffItem, "agent", "source_agent", "target_agent")
    with pytest.raises(TypeError):
        MyMessageItem(raw_item=message("Paris"))
    with pytest.raises(TypeError):
        MyHandoffItem(agent=answering_agent(), raw_item=HANDOFF_RAW)


def test_item_subclasses_keep_their_agents():
    items, refs = kept_items()
    gc.collect()
    message_item, handoff_item = items
    assert message_item.agent is refs[0]() is not None
    assert handoff_item.agent is handoff_item.source_agent is refs[1]() is not None
    assert handoff_item.target_agent is refs[2]() is not None
    assert isinstance(message_item, MessageOutputItem)
    assert message_item.type == "message_output_item"


def test_item_subclasses_release_their_agents():
    items, refs = kept_items()
    for item in items:
        item.release_agent()
    assert collected(*refs)
    message_item, handoff_item = items
    assert message_item.agent is None
    assert (handoff_item.agent, handoff_item.source_agent, handoff_item.target_agent) == (
        None,
        None,
        None,
    )


def test_item_subclass_with_an_agent_default_reads_the_live_agent_after_release():
    @dataclasses.dataclass
    class MyHandoffItem(HandoffOutputItem):
        target_agent: Any = None

    source, target = Agent(name="source"), Agent(name="target")
    item = MyHandoffItem(
        agent=source, raw_item=HANDOFF_RAW, source_agent=source, target_agent=target
    )
    item.release_agent()
    assert item.target_agent is target
    assert "name='target'" in repr(item)
    assert MyHandoffItem.target_agent is None
    ref = weakref.ref(target)
    del target
    assert collected(ref)
    assert item.target_agent is None


async def init_fields(streamed, agent):
    """The init fields of a real run's result (read to its end when streamed)."""
    if streamed:
        result = Runner.run_streamed(agent, "Capital of France?")
        async for _ in result.stream_events():
            pass
    else:
        result = await Runner.run(agent, "Capital of France?")
    return {f.name: getattr(result, f.name) for f in dataclasses.fields(result) if f.init}


async def rebuilt_result(streamed):
    """A real run's result, rebuilt as the subclass from its own fields."""
    cls, field = declare_result(streamed)
    agent = answering_agent()
    init = await init_fields(streamed, agent)
    return cls, field, cls(**init), weakref.ref(agent)


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "streamed"])
def test_result_subclasses_define_with_required_agent_field(streamed):
    cls, field = declare_result(streamed)
    assert without_default(cls, field)


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "streamed"])
async def test_result_subclasses_keep_their_agent(streamed):
    cls, field, result, ref = await rebuilt_result(streamed)
    gc.collect()
    assert isinstance(result, cls)
    assert result.last_agent is ref() is not None
    assert all(item.agent is ref() for item in result.new_items)
    assert result.final_output == "Paris"


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "streamed"])
async def test_result_subclasses_release_their_agent(streamed):
    cls, field, result, ref = await rebuilt_result(streamed)
    result.release_agents()
    assert collected(ref)
    assert all(item.agent is None for item in result.new_items)
    with pytest.raises(AgentsException):
        _ = result.last_agent
    assert result.final_output == "Paris"


if sys.version_info >= (3, 10):

    @dataclasses.dataclass(slots=True)
    class SlottedMessageItem(MessageOutputItem):
        extra: int = 0


COPIES = {
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    "pickle": lambda obj: pickle.loads(pickle.dumps(obj)),
}


@pytest.mark.skipif(sys.version_info < (3, 10), reason="dataclass(slots=True) needs Python 3.10")
@pytest.mark.parametrize("how", list(COPIES))
def test_released_slotted_item_subclass_copies(how):
    item = SlottedMessageItem(agent=answering_agent(), raw_item=message("Paris"), extra=3)
    release = getattr(item, "release_agent", None)  # none before v0.6.0: copies as they are
    if release is not None:
        release()
    clone = COPIES[how](item)
    assert (clone.extra, clone.raw_item, clone.type) == (3, item.raw_item, "message_output_item")
    # Its fields are slots, which a release leaves alone (upstream's too): the agent stays.
    assert clone.agent.name == "answerer"


@pytest.mark.skipif(sys.version_info < (3, 10), reason="dataclass(slots=True) needs Python 3.10")
@pytest.mark.parametrize("streamed, how", [(False, "copy"), (False, "deepcopy"), (True, "copy")])
async def test_slotted_result_subclass_copies(streamed, how):
    """reviewer r051d 1: a `__setstate__` that took the state for a dict broke copies of a
    result subclass with slots (their state is a (dict, slots) pair), release or not. A streamed
    result is not deep-copied: no release can (its context holds contextvars)."""
    base = RunResultStreaming if streamed else RunResult
    namespace = {"__annotations__": {"tag": str}, "tag": "kept"}
    cls = dataclasses.dataclass(slots=True)(type("SlottedResult", (base,), namespace))
    init = await init_fields(streamed, answering_agent())
    clone = COPIES[how](cls(**{**init, "tag": "mine"}))
    assert (type(clone), clone.tag, clone.final_output) == (cls, "mine", "Paris")
