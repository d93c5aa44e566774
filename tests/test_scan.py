"""The scan of every release on PyPI: which releases, what each shows, the page."""

from __future__ import annotations

from pathlib import Path

from helpers import junit

from kit import scan


def test_scan_lists_final_unyanked_releases_with_their_upload_time():
    def entry(name, time, yanked=False):
        return {"filename": name, "upload-time": time, "url": f"https://x/{name}", "yanked": yanked}

    files = [
        entry("openai_agents-0.0.1.tar.gz", "2025-03-01T00:00:00Z", "wrong"),
        entry("openai_agents-0.0.2.tar.gz", "2025-03-11T10:00:00Z"),
        entry("openai_agents-0.0.2-py3-none-any.whl", "2025-03-11T10:00:05Z"),
        entry("openai_agents-0.0.10.tar.gz", "2025-04-01T00:00:00Z"),
        entry("openai_agents-0.1.0rc1-py3-none-any.whl", "2025-05-01T00:00:00Z"),
    ]
    assert scan.releases_on_pypi(files) == [
        {
            "version": "0.0.2",
            "uploaded": "2025-03-11T10:00:05Z",
            "url": "https://x/openai_agents-0.0.2-py3-none-any.whl",
        },
        {
            "version": "0.0.10",
            "uploaded": "2025-04-01T00:00:00Z",
            "url": "https://x/openai_agents-0.0.10.tar.gz",
        },
    ]


def scanned(tmp_path: Path, version: str, outcomes: dict[str, str] | None) -> dict:
    rel = {"version": version, "uploaded": "2025-01-01T00:00:00Z"}
    if outcomes is None:
        return scan.result(rel, tmp_path / "missing.xml")
    return scan.result(rel, junit(tmp_path, version, outcomes))


def test_scan_render_names_first_hold_and_every_break(tmp_path: Path):
    other = {"alive_until_release::test_alive": "passed"}
    results = {
        "0.0.2": scanned(tmp_path, "0.0.2", {"alive_until_release::test_alive": "failed"}),
        "0.0.5": scanned(tmp_path, "0.0.5", None),
        "0.0.19": scanned(tmp_path, "0.0.19", {**other, "release_then_gc::test_frees": "failed"}),
        "0.6.0": scanned(tmp_path, "0.6.0", {**other, "release_then_gc::test_frees": "passed"}),
        "0.7.0": scanned(tmp_path, "0.7.0", {**other, "release_then_gc::test_frees": "failed"}),
        "0.7.1": scanned(tmp_path, "0.7.1", {**other, "release_then_gc::test_frees": "failed"}),
        "0.8.0": scanned(tmp_path, "0.8.0", {**other, "release_then_gc::test_frees": "passed"}),
        "0.9.0": scanned(tmp_path, "0.9.0", {**other, "release_then_gc::test_frees": "failed"}),
    }
    assert results["0.0.5"] == {
        "uploaded": "2025-01-01T00:00:00Z",
        "points": {},
        "failed": [],
        "note": "suite cannot run",
        "why": "",
        "reaches": {},
        "ran": [],
    }
    assert results["0.0.2"]["note"] == "suite cannot run"  # no test passes: not the contract
    assert results["0.0.2"]["why"] == "AssertionError: agent alive"
    cannot_drive = {"alive_until_release::test_alive": "failed", "streaming::test_x": "passed"}
    assert scanned(tmp_path, "0.0.4", cannot_drive)["note"] == "suite cannot run"
    table = scan.render({"python": "3.11", "releases": results})
    assert "| alive_until_release | 0.0.19 | — |" in table
    assert (
        "| release_then_gc | 0.6.0 | 0.7.0 – 0.7.1 (holds again in 0.8.0); 0.9.0 (still broken) |"
        in table
    )
    assert (
        "n/a (suite cannot run): 0.0.2 (`AssertionError: agent alive`); 0.0.5 (`suite cannot"
        in table
    )
    assert "| 0.0.2 – 0.0.5 | n/a (suite cannot run) |  |" in table
    assert "| 0.7.0 – 0.7.1 | ✓ | ✗ |" in table


def test_scan_names_the_paths_point_16_finds_and_where(tmp_path: Path):
    def walk(cell: str, failures: dict[str, list[str]], passes: list[str]) -> Path:
        path = junit(tmp_path, cell, {f"nothing_reachable::{n}": "passed" for n in passes})
        cases = "".join(
            f'<testcase classname="test_nothing_reachable" name="{name}" '
            f'file="test_nothing_reachable.py"><failure message="AssertionError: still reachable'
            " after release_agents():&#10;"
            + "&#10;".join(f"  {p} (Agent 'a')" for p in paths)
            + '">x</failure></testcase>'
            for name, paths in failures.items()
        )
        path.write_text(path.read_text().replace("</testsuite>", cases + "</testsuite>"))
        return path

    test = "test_release_leaves_no_agent_reachable"
    streamed = "test_streamed_release_leaves_no_agent_reachable"
    guard = "result.output_guardrail_results[0].agent"
    state = "result._state._current_agent"
    rel = {"uploaded": "2025-01-01T00:00:00Z"}
    older = scan.result(rel, walk("0.7.0", {f"{test}[output_guardrail]": [guard]}, [
        f"{streamed}[output_guardrail]", f"{test}[handoff]",
        f"{streamed}[handoff]"]))  # fmt: skip
    newer = scan.result(rel, walk("0.8.0", {
        f"{test}[output_guardrail]": [guard],
        f"{streamed}[output_guardrail]": [state, guard],
        f"{streamed}[handoff]": [state],
    }, [f"{test}[handoff]"]))  # fmt: skip
    assert newer["reaches"] == {
        state: ["handoff-run_streamed", "output_guardrail-run_streamed"],
        guard: ["output_guardrail-run", "output_guardrail-run_streamed"],
    }
    page = scan.render({"python": "3.11", "releases": {"0.7.0": older, "0.8.0": newer}})
    assert f"| 0.7.0 | `{guard}`: output_guardrail (run) |" in page
    assert f"| 0.8.0 | `{state}`: every streamed scenario<br>`{guard}`: output_guardrail |" in page


def test_the_scan_names_how_a_scenario_was_driven():
    ran = {"handoff-run", "handoff-run_streamed", "handoff-unread_stream", "hooks-unread_stream",
           "max_turns-after_error"}  # fmt: skip
    assert scan._scenario("test_unread_stream_release_leaves_no_agent_reachable[hooks]") == (
        "hooks-unread_stream"
    )
    assert scan._scenario(
        "test_streamed_release_after_error_leaves_no_agent_reachable[max_turns]"
    ) == ("max_turns-after_error")
    assert scan._scenario("test_something_else[hooks]") is None
    shown = ["handoff-unread_stream", "hooks-unread_stream", "max_turns-after_error"]
    assert scan._scenarios(shown, ran) == "every unread stream, max_turns"
    assert scan._scenarios(["handoff-unread_stream"], ran) == "handoff (unread stream)"
