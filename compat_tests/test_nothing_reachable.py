"""Point 16: after release_agents() no agent is strongly reachable from the result, whatever SDK
feature the run used. A walk of the result's strong references (support.agent_paths) names the
path to each agent it finds.

Each scenario builds its agents with one feature and runs them: plain, streamed, and streamed
with a caller who stops reading early. A streamed run that ends in an error (a tripwire, too many
turns) keeps its result, so those are walked too. A feature the release lacks fails to build with
an ImportError, AttributeError or TypeError (expectations.toml lists those as absent)."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest
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
from support import (
    ScriptedModel,
    agent_paths,
    answering_agent,
    approval_agent,
    handoff_agents,
    looping_agent,
    message,
    run,
    tool_agent,
    tool_call,
)


@input_guardrail
def polite_input(context, agent, input) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info="fine", tripwire_triggered=False)


@output_guardrail
def polite_output(context, agent, output) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info="fine", tripwire_triggered=False)


@input_guardrail
def tripping_input(context, agent, input) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info="no", tripwire_triggered=True)


@output_guardrail
def tripping_output(context, agent, output) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(output_info="no", tripwire_triggered=True)


@dataclasses.dataclass
class Capital:
    city: str


def guarded(where: str, kind: str) -> tuple[Agent[Any], dict[str, Any]]:
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


def agent_as_tool() -> tuple[Agent[Any], dict[str, Any]]:
    helper = answering_agent("helper")
    model = ScriptedModel([tool_call("ask_helper", {"input": "Capital?"})], [message("Paris")])
    tools = [helper.as_tool(tool_name="ask_helper", tool_description="Ask the helper.")]
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


def nested_interruption() -> tuple[Agent[Any], dict[str, Any]]:
    """An agent used as a tool that itself stops for approval: the interruption is the inner
    agent's, not an item of the outer run."""
    inner = approval_agent("inner")
    model = ScriptedModel([tool_call("ask_inner", {"input": "Delete a.txt"})], [message("done")])
    tools = [inner.as_tool(tool_name="ask_inner", tool_description="Ask the inner agent.")]
    return Agent(name="outer", model=model, tools=tools), {}


async def resumed() -> tuple[Agent[Any], dict[str, Any]]:
    """A run resumed from the caller's RunState, the tool call approved."""
    agent = approval_agent()
    interrupted = await Runner.run(agent, "Delete a.txt")
    state = interrupted.to_state()
    state.approve(interrupted.interruptions[0])
    return agent, {"input": state}


SCENARIOS = {
    "input_guardrail_on_agent": lambda: guarded("agent", "input"),
    "output_guardrail_on_agent": lambda: guarded("agent", "output"),
    "input_guardrail_in_run_config": lambda: guarded("run_config", "input"),
    "output_guardrail_in_run_config": lambda: guarded("run_config", "output"),
    "tool_guardrails": tool_guardrails,
    "function_tools": lambda: (tool_agent(), {}),
    "handoff": lambda: (handoff_agents()[0], {}),
    "handoff_input_filter": handoff_with_input_filter,
    "agent_as_tool": agent_as_tool,
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
    agent = answering_agent()
    agent.input_guardrails = [tripping_input]
    return agent, {}


def output_tripwire() -> tuple[Agent[Any], dict[str, Any]]:
    agent = answering_agent()
    agent.output_guardrails = [tripping_output]
    return agent, {}


ERRORS = {
    "input_tripwire": (input_tripwire, InputGuardrailTripwireTriggered),
    "output_tripwire": (output_tripwire, OutputGuardrailTripwireTriggered),
    "max_turns": (lambda: (looping_agent(), {"max_turns": 2}), MaxTurnsExceeded),
}


async def released_result_reaches_no_agent(feature: str, how: str) -> None:
    built = SCENARIOS[feature]()
    agent, kwargs = await built if inspect.isawaitable(built) else built
    result = await run(agent, how, **kwargs)
    assert agent_paths(result), "the walk must see the agents the result holds before release"
    result.release_agents()
    paths = agent_paths(result)
    assert not paths, "still reachable after release_agents():\n" + "\n".join(paths)
    assert agent.name  # the caller's agent is alive all along: only the result let go of it


@pytest.mark.parametrize("feature", list(SCENARIOS))
async def test_release_leaves_no_agent_reachable(feature):
    await released_result_reaches_no_agent(feature, "run")


@pytest.mark.parametrize("feature", list(SCENARIOS))
async def test_streamed_release_leaves_no_agent_reachable(feature):
    await released_result_reaches_no_agent(feature, "run_streamed")


@pytest.mark.parametrize("feature", list(SCENARIOS))
async def test_unread_stream_release_leaves_no_agent_reachable(feature):
    await released_result_reaches_no_agent(feature, "run_streamed_break")


@pytest.mark.parametrize("error", list(ERRORS))
async def test_streamed_release_after_error_leaves_no_agent_reachable(error):
    """The exception is the caller's; what the result keeps of it must not pin the agent."""
    build, exception = ERRORS[error]
    agent, kwargs = build()
    result = Runner.run_streamed(agent, "Go", **kwargs)
    with pytest.raises(exception):
        async for _event in result.stream_events():
            pass
    assert agent_paths(result), "the walk must see the agents the result holds before release"
    result.release_agents()
    paths = agent_paths(result)
    assert not paths, "still reachable after release_agents():\n" + "\n".join(paths)
