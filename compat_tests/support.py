"""A scripted fake model and small helpers shared by the contract tests.

Only the SDK's public API is used, so the same file runs against every release. The model
keeps no reference to what the runner passes it (tools and handoffs hold agents).
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import weakref
from collections import deque
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

from agents import Agent, Runner, function_tool, handoff
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

try:
    from agents.items import ModelResponse
except ImportError:  # pragma: no cover
    from agents import ModelResponse


def message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id="msg_1",
        content=[ResponseOutputText(annotations=[], text=text, type="output_text")],
        role="assistant",
        status="completed",
        type="message",
    )


def tool_call(name: str, arguments: dict[str, Any] | None = None, call_id: str = "call_1"):
    return ResponseFunctionToolCall(
        id=f"fc_{call_id}",
        call_id=call_id,
        name=name,
        arguments=json.dumps(arguments or {}),
        type="function_call",
    )


class ScriptedModel(Model):
    """Answers each turn with the next scripted list of output items; the last one repeats. A
    turn that is an exception is raised instead, as a model that fails does."""

    def __init__(self, *turns: list[Any] | BaseException) -> None:
        self.turns = list(turns)

    def _next(self) -> list[Any]:
        turn = self.turns.pop(0) if len(self.turns) > 1 else self.turns[0]
        if isinstance(turn, BaseException):
            raise turn
        return turn

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        return ModelResponse(output=self._next(), usage=Usage(), response_id=None)

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        response = Response(
            id="resp_1",
            created_at=0,
            model="scripted",
            object="response",
            output=self._next(),
            tool_choice="none",
            tools=[],
            top_p=None,
            parallel_tool_calls=False,
        )
        yield ResponseCompletedEvent(
            type="response.completed", response=response, sequence_number=0
        )


@function_tool
def lookup_city(country: str) -> str:
    """Return the capital of a country."""
    return "Paris"


def answering_agent(name: str = "answerer", text: str = "Paris") -> Agent[Any]:
    """An agent whose run ends on turn 1 with a text answer (the shape of issue #2008)."""
    return Agent(name=name, instructions="Answer.", model=ScriptedModel([message(text)]))


def tool_agent(name: str = "tooler") -> Agent[Any]:
    """Three turns: two function-tool calls, then an answer."""
    model = ScriptedModel(
        [tool_call("lookup_city", {"country": "France"}, "call_1")],
        [tool_call("lookup_city", {"country": "Italy"}, "call_2")],
        [message("Paris and Rome")],
    )
    return Agent(name=name, instructions="Use tools.", model=model, tools=[lookup_city])


def handoff_agents() -> tuple[Agent[Any], Agent[Any]]:
    """A triage agent A that hands off to B; B answers."""
    target = answering_agent("target", "handled")
    source = Agent(
        name="source",
        instructions="Hand off.",
        model=ScriptedModel([tool_call("transfer_to_target")]),
        handoffs=[handoff(target)],
    )
    return source, target


def looping_agent(name: str = "looper") -> Agent[Any]:
    """Calls a tool on every turn, so any max_turns is exceeded."""
    model = ScriptedModel([tool_call("lookup_city", {"country": "France"})])
    return Agent(name=name, instructions="Loop.", model=model, tools=[lookup_city])


def failing_agent(error: BaseException, name: str = "failer") -> Agent[Any]:
    """An agent whose model raises `error` on its first turn."""
    return Agent(name=name, instructions="Fail.", model=ScriptedModel(error))


def collected(*refs: weakref.ref[Any]) -> bool:
    gc.collect()
    return all(ref() is None for ref in refs)


def alive(refs: list[weakref.ref[Any]]) -> int:
    return sum(ref() is not None for ref in refs)


def approval_agent(name: str = "approver") -> Agent[Any]:
    """Asks to call a tool that needs approval, then answers once the call has run.

    The tool is made here, not at import: `needs_approval` arrives with RunState (v0.8.0), and
    every release must still import this module.
    """

    @function_tool(needs_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        return "deleted"

    model = ScriptedModel([tool_call("delete_file", {"path": "a.txt"})], [message("done")])
    return Agent(name=name, instructions="Delete.", model=model, tools=[delete_file])


def same_name_handoff_agents() -> tuple[Agent[Any], Agent[Any]]:
    """A triage agent that can hand off to two agents both named "worker", and hands off to
    the second. A serialised RunState tells same-name agents apart by their place in the graph
    of the agent it is rooted at, so its JSON shows which agent that is."""
    decoy = Agent(name="worker", instructions="A: not me.", model=ScriptedModel([message("no")]))
    target = Agent(name="worker", instructions="B: answer.", model=ScriptedModel([message("ok")]))
    source = Agent(
        name="triage",
        instructions="Hand off.",
        model=ScriptedModel([tool_call("transfer_to_target")]),
        handoffs=[handoff(decoy), handoff(target, tool_name_override="transfer_to_target")],
    )
    return source, target


async def run(agent: Agent[Any], how: str, input: Any = "Go", **kwargs: Any) -> Any:
    """`Runner.run`, or `Runner.run_streamed` with its events drained: `how` is "run" or
    "run_streamed". "run_streamed_break" reads one event and stops reading, as a caller who has
    seen enough does; it returns once the run, going on without a reader, has finished."""
    if how == "run":
        return await Runner.run(agent, input, **kwargs)
    result = Runner.run_streamed(agent, input, **kwargs)
    async for _event in result.stream_events():
        if how == "run_streamed_break":
            break
    if how == "run_streamed_break":
        await run_over(result)
    return result


def run_task(result: Any) -> Any:
    """A streamed result's run loop task: `run_loop_task` from v0.8.0, `_run_impl_task` before."""
    return getattr(result, "run_loop_task", None) or result._run_impl_task


async def run_over(result: Any) -> None:
    """Wait, without reading the stream, until the streamed run and its guardrail tasks have
    finished (the guardrail tasks exist once the run has started its first turn)."""
    task = run_task(result)
    await asyncio.wait([task], timeout=10)
    assert task.done(), "the run did not finish without a reader"
    names = ("_input_guardrails_task", "_output_guardrails_task")
    guardrails = [t for t in (getattr(result, n, None) for n in names) if t is not None]
    if guardrails:
        await asyncio.wait(guardrails, timeout=10)
        assert all(t.done() for t in guardrails), "a guardrail task did not finish"
    for _ in range(5):  # the callbacks of what has just finished
        await asyncio.sleep(0)


def agent_paths(root: Any, name: str = "result") -> list[str]:
    """The paths by which an `Agent` is strongly reachable from `root`, e.g.
    `result.output_guardrail_results[0].agent`.

    A breadth-first walk of `gc.get_referents`, so weak references are not followed. It does not
    go into modules, classes, module globals or event loops (from a task, the loop reaches every
    other task, the test's own among them); it names every reference to an agent and does not go
    on into the agent.
    """
    stop = {id(m.__dict__) for m in list(sys.modules.values()) if isinstance(m, ModuleType)}
    seen = {id(root)}
    instance_dicts: set[int] = set()
    queue = deque([(root, name)])
    found = []
    while queue:
        parent, path = queue.popleft()
        for child in gc.get_referents(parent):
            if isinstance(child, Agent):  # every reference to it, not only the first found
                step = _step(parent, child, id(parent) in instance_dicts)
                found.append(f"{path}{step} (Agent {child.name!r})")
                continue
            if id(child) in seen or id(child) in stop:
                continue
            seen.add(id(child))
            if isinstance(child, (type, ModuleType, asyncio.AbstractEventLoop)):
                continue
            if child is getattr(parent, "__dict__", None):
                instance_dicts.add(id(child))
                queue.append((child, path))
            else:
                queue.append((child, path + _step(parent, child, id(parent) in instance_dicts)))
    return list(dict.fromkeys(found))


def _step(parent: Any, child: Any, attributes: bool) -> str:
    """How `child` is reached from `parent`, for a path a reader can follow."""
    if isinstance(parent, dict):
        key = next((k for k, v in parent.items() if v is child), "<key>")
        return f".{key}" if attributes else f"[{key!r}]"
    if isinstance(parent, (list, tuple, deque)):
        index = next((i for i, v in enumerate(parent) if v is child), "?")
        return f"[{index}]"
    names = [*getattr(parent, "__dict__", {}), *getattr(type(parent), "__slots__", ())]
    names += ["cell_contents", "__closure__", "__defaults__", "__self__", "__func__", "cr_frame"]
    for attr in names:
        try:
            if getattr(parent, attr) is child:
                return f".{attr}"
        except Exception:  # a property that raises, an empty cell
            continue
    return f"->{type(child).__name__}"
