"""A scripted fake model and small helpers shared by the contract tests.

Only the SDK's public API is used, so the same file runs against every release. The model
keeps no reference to what the runner passes it (tools and handoffs hold agents).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import inspect
import itertools
import json
import sys
import weakref
from collections import deque
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any

from agents import (
    Agent,
    GuardrailFunctionOutput,
    InputGuardrailTripwireTriggered,
    MaxTurnsExceeded,
    OutputGuardrailTripwireTriggered,
    RunConfig,
    RunHooks,
    Runner,
    function_tool,
    handoff,
    input_guardrail,
    output_guardrail,
)
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


async def read_until_the_error(result, exception, stop_early):
    """Read the stream to the error it raises, or stop after one event (if the error has not
    come first) and wait for the run to end without a reader."""
    with contextlib.suppress(exception):
        async for _event in result.stream_events():
            if stop_early:
                break
        else:
            raise AssertionError("the run must fail")
    await run_over(result)


def agent_paths(root: Any, name: str = "result") -> list[str]:
    """The paths by which an `Agent` is strongly reachable from `root`, e.g.
    `result.output_guardrail_results[0].agent`.

    A breadth-first walk of `gc.get_referents`, so weak references are not followed. It does not
    go into modules, classes, module globals or event loops (from a task, the loop reaches every
    other task, the test's own among them); it names every reference to an agent and does not go
    on into the agent.
    """
    stop = set(_module_dicts())
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


def _module_dicts() -> dict[int, str]:
    return {
        id(m.__dict__): m.__name__ for m in list(sys.modules.values()) if isinstance(m, ModuleType)
    }


def agents_of(*roots: Any) -> list[Agent[Any]]:
    """Every `Agent` strongly reachable from `roots` (a scenario's starting agent and Runner
    arguments): its tools', handoffs' and a RunState's agents too. The same walk as
    `agent_paths`, but it goes on into the agents it finds."""
    stop = set(_module_dicts())
    seen = {id(root) for root in roots}
    queue = deque(roots)
    found: dict[int, Agent[Any]] = {}
    while queue:
        parent = queue.popleft()
        if isinstance(parent, Agent):
            found.setdefault(id(parent), parent)
        for child in gc.get_referents(parent):
            if id(child) in seen or id(child) in stop:
                continue
            seen.add(id(child))
            if not isinstance(child, (type, ModuleType, asyncio.AbstractEventLoop)):
                queue.append(child)
    return list(found.values())


def watch(*roots: Any) -> dict[int, tuple[weakref.ref[Any], str]]:
    """Weak references to every agent reachable from `roots` (see `agents_of`), by id, with
    their names: what `all_collected` later checks."""
    refs = {id(a): (weakref.ref(a), a.name) for a in agents_of(*roots)}
    assert refs, "the scenario must build agents"
    return refs


FAILURE_EXPECTED = False
"""Set by the conftest while a test expectations.toml marks as failing runs."""


async def all_collected(
    refs: dict[int, tuple[weakref.ref[Any], str]], when: str, kept: Any = None
) -> None:
    """Assert that every watched agent is collected, naming what holds each one still alive: a
    chain from a module global, or a path from `kept` (a result the caller keeps). A stream
    left unread closes its generator on a later loop iteration, so the loop turns."""
    for _ in range(20):
        gc.collect()
        if all(ref() is None for ref, _name in refs.values()):
            return
        await asyncio.sleep(0)
    alive = [(name, ref()) for ref, name in refs.values() if ref() is not None]
    paths = [] if kept is None else agent_paths(kept)
    # Tracing holders scans the whole heap (about a second on 0.24.0); a failure that
    # expectations.toml predicts would pay it for a message nobody reads.
    trace = holders if not FAILURE_EXPECTED else lambda _agent: "not traced (an expected failure)"
    raise AssertionError(
        f"still alive {when}:\n"
        + "\n".join(f"Agent {n!r}: {trace(a)}" for n, a in alive)
        + "".join(f"\nreachable from the kept result: {path}" for path in paths)
    )


def holders(target: Any, limit: int = 2000) -> str:
    """What keeps `target` alive, for a failure message: the shortest chain of strong references
    from a module global (a GC root) to it, e.g.
    `agents.agent_tool_state._agent_tool_run_results_by_obj[...] -> RunResult.context_wrapper ...`,
    found by walking `gc.get_referrers` backwards; else the objects that refer to it directly."""
    gc.collect()
    gc.unfreeze()  # the conftest froze the modules, and frozen objects are no referrers
    modules = _module_dicts()
    frame = sys._getframe()
    parent_of: dict[int, Any] = {id(target): None}
    queue = deque([target])
    ignored = {id(parent_of), id(queue), id(frame)}
    try:
        while queue and len(parent_of) < limit:
            obj = queue.popleft()
            referrers = gc.get_referrers(obj)
            ignored.add(id(referrers))
            for referrer in referrers:
                if id(referrer) in ignored or id(referrer) in parent_of:
                    continue
                if inspect.isframe(referrer) or _running(referrer):
                    continue  # the caller's own stack: its locals, not what keeps `target`
                if id(referrer) in modules:
                    chain = [referrer, obj]
                    while parent_of[id(chain[-1])] is not None:
                        chain.append(parent_of[id(chain[-1])])
                    return _describe_chain(modules[id(referrer)], chain)
                parent_of[id(referrer)] = obj
                queue.append(referrer)
        direct = [type(r).__name__ for r in gc.get_referrers(target) if not inspect.isframe(r)]
        return f"no module global reaches it; referred to by {direct}"
    finally:
        del frame, queue, parent_of
        gc.freeze()  # as the conftest left it: later collections skip what is alive now


def _running(obj: Any) -> bool:
    """A coroutine or generator on the current stack (its frame lives inside it)."""
    return bool(
        getattr(obj, "cr_running", False)
        or getattr(obj, "gi_running", False)
        or getattr(obj, "ag_running", False)
    )


def _describe_chain(module: str, chain: list[Any]) -> str:
    """`module.global.attr[0]... (Type)` for a chain [module dict, ..., target]."""
    text = module
    attributes = True  # a module dict's keys are its globals
    for parent, child in zip(chain, chain[1:]):
        if child is getattr(parent, "__dict__", None):
            attributes = True
            continue
        step = _step(parent, child, attributes)
        attributes = False
        if not step.startswith("->") and not isinstance(child, (dict, list, tuple, deque, set)):
            step += f":{type(child).__name__}"
        text += step
    return text


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


# The scenarios of the walk (test_nothing_reachable.py) and of the out-of-scope point
# (test_freed_out_of_scope.py): each builds its agents with one SDK feature and returns the
# starting agent and Runner keyword arguments. A feature the release lacks fails to build with an
# ImportError, AttributeError or TypeError (expectations.toml lists those as absent).


@input_guardrail
def polite_input(context, agent, input) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info="fine", tripwire_triggered=False)


@output_guardrail
def polite_output(context, agent, output) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info="fine", tripwire_triggered=False)


@input_guardrail
def tripping_input(context, agent, input) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info="no", tripwire_triggered=True)


@input_guardrail
def raising_input(context, agent, input) -> GuardrailFunctionOutput:
    raise ValueError("guardrail bug")


@output_guardrail
def tripping_output(context, agent, output) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info="no", tripwire_triggered=True)


@dataclasses.dataclass
class Capital:
    city: str


def with_guardrails(agent: Agent[Any], input: Any = (), output: Any = ()) -> Agent[Any]:
    """`agent` with these input and output guardrails."""
    agent.input_guardrails = list(input)
    agent.output_guardrails = list(output)
    return agent


def guardrail_scenario(where: str, kind: str) -> tuple[Agent[Any], dict[str, Any]]:
    """A guardrail that passes, of `kind` ("input", "output"), on the agent or in RunConfig."""
    agent = answering_agent()
    guardrail = polite_input if kind == "input" else polite_output
    if where == "agent":
        setattr(agent, f"{kind}_guardrails", [guardrail])
        return agent, {}
    return agent, {"run_config": RunConfig(**{f"{kind}_guardrails": [guardrail]})}


def tool_guardrails() -> tuple[Agent[Any], dict[str, Any]]:
    from agents import ToolGuardrailFunctionOutput, tool_input_guardrail, tool_output_guardrail

    @tool_input_guardrail
    def check_input(data) -> ToolGuardrailFunctionOutput:
        return ToolGuardrailFunctionOutput.allow()

    @tool_output_guardrail
    def check_output(data) -> ToolGuardrailFunctionOutput:
        return ToolGuardrailFunctionOutput.allow()

    def lookup_city(country: str) -> str:
        """Return the capital of a country."""
        return "Paris"

    tool = function_tool(lookup_city)  # the decorator takes guardrails from v0.6.5 on
    tool.tool_input_guardrails = [check_input]
    tool.tool_output_guardrails = [check_output]
    agent = tool_agent()
    agent.tools = [tool]
    return agent, {}


def handoff_with_input_filter() -> tuple[Agent[Any], dict[str, Any]]:
    source, target = handoff_agents()
    source.handoffs = [handoff(target, input_filter=lambda data: data)]
    return source, {}


def agent_as_tool(**options: Any) -> tuple[Agent[Any], dict[str, Any]]:
    """An agent used as a tool; `options` go to `as_tool()` (e.g. `on_stream`)."""
    helper = answering_agent("helper")
    model = ScriptedModel([tool_call("ask_helper", {"input": "Capital?"})], [message("Paris")])
    tools = [helper.as_tool(tool_name="ask_helper", tool_description="Ask the helper.", **options)]
    return Agent(name="orchestrator", model=model, tools=tools), {}


def structured_output() -> tuple[Agent[Any], dict[str, Any]]:
    model = ScriptedModel([message('{"response": {"city": "Paris"}}')])
    return Agent(name="structured", model=model, output_type=Capital), {}


def stop_on_first_tool() -> tuple[Agent[Any], dict[str, Any]]:
    agent = tool_agent()
    agent.tool_use_behavior = "stop_on_first_tool"
    return agent, {}


class CountingHooks(RunHooks):
    def __init__(self) -> None:
        self.events = 0

    async def on_agent_start(self, context, agent) -> None:
        self.events += 1

    async def on_agent_end(self, context, agent, output) -> None:
        self.events += 1


def with_hooks() -> tuple[Agent[Any], dict[str, Any]]:
    return handoff_agents()[0], {"hooks": CountingHooks()}


def with_session() -> tuple[Agent[Any], dict[str, Any]]:
    from agents import SQLiteSession

    return answering_agent(), {"session": SQLiteSession("walk")}


def interrupted() -> tuple[Agent[Any], dict[str, Any]]:
    """A run that stops for approval of a tool call: its result holds the interruptions."""
    return approval_agent(), {}


def agent_tool_approval() -> tuple[Agent[Any], dict[str, Any]]:
    """A run that stops for approval of a call to an agent used as a tool: the pending call
    names the tool, which holds the agent."""
    helper = answering_agent("helper")
    model = ScriptedModel([tool_call("ask_helper", {"input": "Capital?"})], [message("Paris")])
    tool = helper.as_tool(tool_name="ask_helper", tool_description="Ask.", needs_approval=True)
    return Agent(name="orchestrator", model=model, tools=[tool]), {}


nested_call_ids = itertools.count(1)


def nested_interruption(**options: Any) -> tuple[Agent[Any], dict[str, Any]]:
    """An agent used as a tool that itself stops for approval: the interruption is the inner
    agent's, not an item of the outer run. `options` go to `as_tool()` (e.g. `on_stream`)."""
    inner = approval_agent("inner")
    # A call id of its own: the SDK also finds a pending nested result by the call's fields, and
    # a run must not pick up the one an earlier test left behind.
    call = tool_call("ask_inner", {"input": "Delete a.txt"}, f"call_outer_{next(nested_call_ids)}")
    model = ScriptedModel([call], [message("done")])
    tools = [
        inner.as_tool(tool_name="ask_inner", tool_description="Ask the inner agent.", **options)
    ]
    return Agent(name="outer", model=model, tools=tools), {}


def approval_mcp_server(require_approval: Any = "always") -> Any:
    """A local MCP server (no process) with one tool, `delete_file`, that needs approval (as
    `require_approval` says); the calls it served are in its `calls`. The SDK makes a
    `FunctionTool` of it for each run: no agent has it."""
    from agents.mcp import MCPServer
    from mcp.types import CallToolResult, ListPromptsResult, TextContent
    from mcp.types import Tool as MCPTool

    class ApprovalMCPServer(MCPServer):
        def __init__(self) -> None:
            super().__init__(require_approval=require_approval)
            self.calls: list[str] = []

        @property
        def name(self) -> str:
            return "files"

        async def connect(self) -> None:
            pass

        async def cleanup(self) -> None:
            pass

        async def list_tools(self, run_context: Any = None, agent: Any = None) -> list[Any]:
            schema = {"type": "object", "properties": {"path": {"type": "string"}}}
            return [MCPTool(name="delete_file", inputSchema=schema)]

        async def call_tool(self, tool_name: str, arguments: Any, meta: Any = None) -> Any:
            self.calls.append(tool_name)
            return CallToolResult(content=[TextContent(type="text", text="deleted")])

        async def list_prompts(self) -> Any:
            return ListPromptsResult(prompts=[])

        async def get_prompt(self, name: str, arguments: Any = None) -> Any:
            raise NotImplementedError

    return ApprovalMCPServer()


async def resumed() -> tuple[Agent[Any], dict[str, Any]]:
    """A run resumed from the caller's RunState, the tool call approved."""
    agent = approval_agent()
    interrupted = await Runner.run(agent, "Delete a.txt")
    state = interrupted.to_state()
    state.approve(interrupted.interruptions[0])
    return agent, {"input": state}


SCENARIOS = {
    "input_guardrail_on_agent": lambda: guardrail_scenario("agent", "input"),
    "output_guardrail_on_agent": lambda: guardrail_scenario("agent", "output"),
    "input_guardrail_in_run_config": lambda: guardrail_scenario("run_config", "input"),
    "output_guardrail_in_run_config": lambda: guardrail_scenario("run_config", "output"),
    "tool_guardrails": tool_guardrails,
    "function_tools": lambda: (tool_agent(), {}),
    "handoff": lambda: (handoff_agents()[0], {}),
    "handoff_input_filter": handoff_with_input_filter,
    "agent_as_tool": agent_as_tool,
    "streamed_agent_as_tool": lambda: agent_as_tool(on_stream=lambda event: None),
    "structured_output": structured_output,
    "stop_on_first_tool": stop_on_first_tool,
    "hooks": with_hooks,
    "session": with_session,
    "interruption": interrupted,
    "agent_tool_approval": agent_tool_approval,
    "nested_interruption": nested_interruption,
    "resumed_run": resumed,
}


def input_tripwire() -> tuple[Agent[Any], dict[str, Any]]:
    return with_guardrails(answering_agent(), input=[tripping_input]), {}


def output_tripwire() -> tuple[Agent[Any], dict[str, Any]]:
    return with_guardrails(answering_agent(), output=[tripping_output]), {}


ERRORS = {
    "input_tripwire": (input_tripwire, InputGuardrailTripwireTriggered),
    "output_tripwire": (output_tripwire, OutputGuardrailTripwireTriggered),
    "max_turns": (lambda: (looping_agent(), {"max_turns": 2}), MaxTurnsExceeded),
}


async def build_scenario(feature: str) -> tuple[Agent[Any], dict[str, Any]]:
    built = SCENARIOS[feature]()
    return await built if inspect.isawaitable(built) else built
