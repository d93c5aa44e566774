"""Point 14: resumed runs. A run resumed from the caller's RunState (after approving a tool
call) gives a result whose release leaves that state as it was: still the caller's,
serialisable and resumable. The result's own references are still released: once the caller
drops its state and agent, the agent is freed."""

import copy
import dataclasses
import gc
import sys
import weakref

import pytest
from agents import Agent, Runner, function_tool
from agents.exceptions import AgentsException
from support import (
    ScriptedModel,
    all_collected,
    approval_agent,
    approval_mcp_server,
    collected,
    message,
    nested_call_ids,
    nested_interruption,
    run,
    tool_call,
    watch,
)

RESUME = ["run", "run_streamed"]


async def approved_state(agent):
    """The caller's state of a run stopped for approval, with the tool call approved."""
    interrupted = await Runner.run(agent, "Delete a.txt")
    state = interrupted.to_state()
    state.approve(interrupted.interruptions[0])
    return state


async def resume(agent, state, how):
    if how == "run":
        return await Runner.run(agent, state)
    result = Runner.run_streamed(agent, state)
    async for _event in result.stream_events():
        pass
    return result


@pytest.mark.parametrize("how", RESUME)
async def test_release_leaves_the_callers_state_intact(how):
    agent = approval_agent()
    state = await approved_state(agent)
    result = await resume(agent, state, how)
    assert result.final_output == "done"
    serialised = state.to_json()
    result.release_agents()
    assert state.to_json() == serialised
    assert result.last_agent is agent


@pytest.mark.parametrize("how", RESUME)
async def test_released_resumed_result_frees_agent_once_caller_drops_state(how):
    agent = approval_agent()
    ref = weakref.ref(agent)
    state = await approved_state(agent)
    result = await resume(agent, state, how)
    result.release_agents()
    assert state.to_json()["current_agent"]["name"] == "approver"
    del agent, state
    assert collected(ref)
    with pytest.raises(AgentsException):
        _ = result.last_agent


async def test_resuming_again_frees_agent():
    """The released result's copy of the caller's state shares nothing the next run appends to."""
    agent = approval_agent()
    ref = weakref.ref(agent)
    state = await approved_state(agent)
    first = await resume(agent, state, "run_streamed")
    first.release_agents()
    again = await resume(agent, state, "run_streamed")
    assert again.final_output == "done"
    del again, agent, state
    assert collected(ref)
    assert first.final_output == "done"


@pytest.mark.parametrize("how", RESUME)
async def test_released_interrupted_result_gives_a_resumable_state(how):
    """reviewer r024 r5 (a pending MCP tool call: to_state() of the released result raises,
    since only the run held the tool the server listed; a documented deviation of the 0.8+
    series). What is promised: while the agents live, a result interrupted for approval of a
    function tool call and released still converts to a state that approves and resumes."""
    agent = approval_agent()
    interrupted = await run(agent, how, "Delete a.txt")
    assert interrupted.interruptions
    interrupted.release_agents()
    state = interrupted.to_state()
    state.approve(state.get_interruptions()[0])
    result = await Runner.run(agent, state)
    assert result.final_output == "done"


async def nested_state(agent, decide, source="to_state"):
    """A run whose agent tool stopped for approval of the inner agent's tool call(s), and the
    caller's state of it; `decide` approves none, the first, or all of them. The caller keeps
    the interrupted result until it resumes (v0.19 finds the nested run through it). With
    `source="from_json"` the state is rebuilt from its JSON, as a server that stored it does."""
    interrupted = await Runner.run(agent, "Go")
    state = interrupted.to_state()
    if source == "from_json":
        from agents.run_state import RunState  # v0.8.0+: the module must import on every release

        state = await RunState.from_json(agent, state.to_json())
    pending = state.get_interruptions()
    for item in {"none": [], "first": pending[:1], "all": pending}[decide]:
        state.approve(item)
    return interrupted, state


def two_nested_calls():
    """An agent tool called twice in one turn, each inner run stopping for approval."""
    inner = approval_agent("inner")
    deletes = [[tool_call("delete_file", {"path": f"{n}.txt"}, f"call_delete_{n}")] for n in (1, 2)]
    inner.model = ScriptedModel(*deletes, [message("done")])
    # Call ids of their own: an earlier test's pending nested run must not be found by them.
    run_id = next(nested_call_ids)
    calls = [
        tool_call("ask_inner", {"input": f"Delete {n}"}, f"call_two_{run_id}_{n}") for n in (1, 2)
    ]
    tool = inner.as_tool(tool_name="ask_inner", tool_description="Ask the inner agent.")
    return Agent(name="outer", model=ScriptedModel(calls, [message("done")]), tools=[tool])


@pytest.mark.parametrize("source", ["to_state", "from_json"])
@pytest.mark.parametrize("how", RESUME)
async def test_kept_released_result_of_a_resumed_nested_approval_frees_every_agent(how, source):
    """reviewer r024e 1: approve what an agent tool's inner run asked for, resume, keep the
    finished result and release it: nothing of the interrupted turn (its processed response,
    whose agent tool holds the inner agent) may stay with it. reviewer r024h 4: from a state
    rebuilt by `from_json()`, whose items are objects of their own, too."""
    outer, _ = nested_interruption()
    refs = watch(outer)
    interrupted, state = await nested_state(outer, "all", source)
    result = await resume(outer, state, how)
    assert result.final_output == "done"
    result.release_agents()
    del outer, interrupted, state
    await all_collected(refs, "with the released result kept", kept=result)


@pytest.mark.parametrize("source", ["to_state", "from_json"])
@pytest.mark.parametrize("decide", ["none", "first"])
@pytest.mark.parametrize("how", RESUME)
async def test_kept_released_result_with_a_nested_approval_still_pending_frees_every_agent(
    how, decide, source
):
    """reviewer r024e 2: a resumed run that stops again on an agent tool's approval left
    pending. Its released result, kept, must not keep the inner run alive (the SDK's record of
    the pending nested run is tied to the caller's state, which the caller dropped)."""
    outer = two_nested_calls() if decide == "first" else nested_interruption()[0]
    refs = watch(outer)
    interrupted, state = await nested_state(outer, decide, source)
    result = await resume(outer, state, how)
    assert result.interruptions
    result.release_agents()
    del outer, interrupted, state
    await all_collected(refs, "with the released result kept", kept=result)


@pytest.mark.parametrize("how", RESUME)
async def test_kept_released_result_whose_streamed_agent_tool_awaits_approval_frees_every_agent(
    how,
):
    """reviewer r024h 2: an agent tool that streams its nested run (`on_stream`) and stops for
    approval leaves a streamed nested result in the SDK's store; its own copy of the run state
    kept the tool call's context, whose agent is the outer one, after release."""
    outer, _ = nested_interruption(on_stream=lambda event: None)
    refs = watch(outer)
    result = await run(outer, how)
    assert result.interruptions
    result.release_agents()
    del outer
    await all_collected(refs, "with the released result kept", kept=result)


needs_mcp = pytest.mark.skipif(
    sys.version_info < (3, 10), reason="the SDK's MCP support needs Python 3.10 (the mcp package)"
)


def mcp_user(server):
    """An agent that asks the MCP server to delete a file, then says it is done."""
    model = ScriptedModel([tool_call("delete_file", {"path": "a.txt"})], [message("done")])
    return Agent(name="mcp_user", model=model, mcp_servers=[server])


@needs_mcp
@pytest.mark.parametrize("how", RESUME)
async def test_a_released_result_interrupted_on_an_mcp_tool_resumes(how):
    """reviewer r024h 1: the tool an MCP server lists is made for the run and is no agent's;
    release held it weakly, so `to_state()` of the released result found it gone and raised
    while the agent and the server were alive. Upstream resumes."""
    server = approval_mcp_server()
    agent = mcp_user(server)
    result = await run(agent, how, "Delete a.txt")
    assert result.interruptions
    result.release_agents()
    gc.collect()
    state = result.to_state()
    state.approve(state.get_interruptions()[0])
    resumed = await Runner.run(agent, state)
    assert resumed.final_output == "done"
    assert server.calls == ["delete_file"]


def approve_every_call(context, agent, tool):
    return True


@needs_mcp
@pytest.mark.parametrize("policy", ["always", "callable"])
@pytest.mark.parametrize("how", RESUME)
async def test_kept_released_result_interrupted_on_an_mcp_tool_frees_its_agent(how, policy):
    """reviewers r32a, r32d: the result keeps the tool an MCP server made for the run (it is no
    agent's, and the resume needs it); with a callable `require_approval`, the SDK gives that
    tool an approval check that is passed the agent, and the check must not keep it."""
    server = approval_mcp_server(
        require_approval="always" if policy == "always" else approve_every_call
    )
    agent = mcp_user(server)
    refs = watch(agent)
    result = await run(agent, how, "Delete a.txt")
    assert result.interruptions
    result.release_agents()
    del agent
    await all_collected(refs, "with the released result kept", kept=result)


@pytest.mark.parametrize("how", RESUME)
async def test_a_nested_run_resumed_after_release_reads_the_outer_agent(how):
    """reviewer r024i 1: an agent tool's nested run has the tool call's context, whose `agent`
    is the outer agent. Resumed after the outer result's release, the nested run reads it as
    before; so do copies of the released nested result's context, while the agent lives."""
    seen, nested_results = [], []

    async def extract(nested):
        nested_results.append(nested)
        seen.append(nested.context_wrapper.agent)
        return str(nested.final_output)

    outer, _ = nested_interruption(custom_output_extractor=extract)
    interrupted = await run(outer, how)
    assert interrupted.interruptions
    interrupted.release_agents()
    state = interrupted.to_state()
    state.approve(state.get_interruptions()[0])
    seen.clear()  # some releases call the extractor on the interrupted nested run too
    result = await resume(outer, state, how)
    assert result.final_output == "done"
    assert seen and all(agent is outer for agent in seen)
    nested = nested_results[-1]
    nested.release_agents()
    assert copy.copy(nested.context_wrapper).agent is outer
    # A deep copy of an unreleased context copies its agent; of a released one, it shares it.
    assert getattr(copy.deepcopy(nested.context_wrapper).agent, "name", None) == "outer"


@pytest.mark.parametrize("source", ["to_state", "from_json"])
@pytest.mark.parametrize("how", RESUME)
async def test_a_replaced_released_result_with_a_nested_approval_pending_resumes(how, source):
    """reviewer r024f 2: `dataclasses.replace()` of the released result of a resume that stopped
    again on an agent tool's approval is as resumable as the result: its own `to_state()`,
    approved, finishes the run while the agents live."""
    outer = two_nested_calls()
    interrupted, state = await nested_state(outer, "first", source)
    result = await resume(outer, state, how)
    assert result.interruptions
    result.release_agents()
    twin = dataclasses.replace(result)
    del interrupted, state, result
    again = twin.to_state()
    for item in again.get_interruptions():
        again.approve(item)
    finished = await Runner.run(outer, again)
    assert finished.final_output == "done"


async def second_resume(release, keep_state=True):
    """Approve an agent tool's pending nested call, resume, then resume again from the first
    result's to_state() (after dropping the first state and the resumed result unless
    `keep_state`): what the second resume does, and how often the inner tool ran."""
    runs = []

    @function_tool(needs_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        runs.append(path)
        return "deleted"

    call_id = f"call_again_{next(nested_call_ids)}"
    inner = Agent(
        name="inner",
        model=ScriptedModel([tool_call("delete_file", {"path": "a.txt"})], [message("done")]),
        tools=[delete_file],
    )
    outer = Agent(
        name="outer",
        model=ScriptedModel([tool_call("ask_inner", {"input": "Go"}, call_id)], [message("done")]),
        tools=[inner.as_tool(tool_name="ask_inner", tool_description="Ask the inner agent.")],
    )
    interrupted = await Runner.run(outer, "Go")
    state = interrupted.to_state()
    if release:
        interrupted.release_agents()
    for item in state.get_interruptions():
        state.approve(item)
    await Runner.run(outer, state)
    if not keep_state:
        del state
        gc.collect()
    again = interrupted.to_state()
    for item in again.get_interruptions():
        again.approve(item)
    try:
        outcome = (await Runner.run(outer, again)).final_output
    except Exception as error:  # the outcome to compare, whatever the release does
        outcome = type(error).__name__
    return outcome, len(runs)


@pytest.mark.parametrize("keep_state", [True, False], ids=["state-kept", "state-dropped"])
async def test_a_released_results_state_resumes_as_the_unreleased_ones_does(keep_state):
    """reviewer r024g 2: while the agents live, the state of a released result resumes as the
    unreleased result's does; where the release made a new copy of the approved nested call, the
    SDK no longer knew it had run, and ran the inner tool a second time. Dropping the state the
    first resume changed must not bring that back."""
    released = await second_resume(release=True, keep_state=keep_state)
    assert released == await second_resume(release=False, keep_state=keep_state)
