"""The report as people and tools read it: Markdown (CI's step summary), one self-contained HTML
page (no network) with a drill-down per contract point, release and cell, and JSON."""

from __future__ import annotations

import html
import json
import os
from collections import Counter
from pathlib import Path

from . import PATCHES, MatrixError
from .coverage import coverage_text, patch_coverage
from .junit import WORDS
from .releases import patched_versions
from .report import COMPAT, ICONS, LEGEND, build_report, collect
from .report import columns as _columns
from .report import find as _find
from .report import first_line as _first_line
from .safe import write_atomically


def verdict(report: dict) -> str:
    """failed while anything is unexpected; incomplete while a cell did not run or ran only in
    part, or (where every Python is required, as in CI) lacked its interpreter; else passed."""
    t = report["totals"]
    if t["unexpected"]:
        return "failed"
    lacking = t["unavailable"] and report["require_pythons"]
    return "incomplete" if t["partial"] or t["not_run"] or lacking else "passed"


def summary_line(report: dict) -> str:
    t = report["totals"]
    if verdict(report) == "passed" and t["unavailable"]:
        return (
            f"passed here: every cell that could run here ran as expected ({t['as_expected']}); "
            f"{t['unavailable']} need an interpreter this machine lacks"
        )
    ran = t["as_expected"]
    if verdict(report) == "incomplete" and t["not_run"] and ran and not t["partial"]:
        lacking = f", {t['unavailable']} need an interpreter this machine lacks"
        return (
            f"incomplete, as expected where it ran: {ran} ran as expected"
            f"{lacking if t['unavailable'] else ''}, {t['not_run']} of {t['cells']} cells not run "
            "(a slice: `nox -s compat` runs them all)"
        )
    counts = [
        f"{t['as_expected']} as expected",
        f"{t['unexpected']} unexpected",
        f"{t['partial']} partial or interrupted",
        f"{t['unavailable']} without their interpreter here",
        f"{t['not_run']} not run",
    ]
    return f"{verdict(report)}: {t['cells']} cells, " + ", ".join(counts)


def _legend(symbol, escape=str) -> list[str]:
    return [f"{symbol(k)} {escape(text)}" for k, text in LEGEND.items()] + ["— no such cell"]


VERDICT_ICONS = {"incomplete": ICONS["partial"], **ICONS}  # a release's verdict, as a cell's status
MD_TESTS = 5  # tests named per group of failures; report.html has them all


def _verdicts(report: dict) -> list[tuple[str, list[str], str]]:
    """(verdict, release, text) per release that ran, then those that did not, a line per why."""
    out, idle = [], {}  # idle: the releases not run, by why
    for rel in report["releases"]:
        v = rel["verdict"]
        if v["verdict"] == "not-run":
            idle.setdefault(v["text"], []).append(rel["version"])
        else:
            out.append((v["verdict"], [rel["version"]], v["text"]))
    return out + [("not-run", versions, text) for text, versions in idle.items()]


def _cells_by_release(keys: list[str]) -> dict[str, list[tuple[str, str]]]:
    """`0.5.1 patched` -> [(python, cell key)]: a group's cells, compactly."""
    found: dict[str, list[tuple[str, str]]] = {}
    for key in keys:
        prefix, python = key.rsplit("-py", 1)
        found.setdefault(prefix.replace("-", " "), []).append((python, key))
    return found


def _failures_heading(groups: list[dict]) -> str:
    total = sum(g["count"] for g in groups)
    return f"Unexpected failures: {total}, in {len(groups)} group{'s' * (len(groups) > 1)}"


def _md_text(text: str) -> str:
    return html.escape(_first_line(text), quote=False).replace("|", "\\|")


def _md_top(report: dict) -> list[str]:
    """What a reader wants first: a verdict per release, and the unexpected failures grouped."""
    out = [
        f"- {VERDICT_ICONS[v]} **{', '.join(names)}**: {_md_text(text)}"
        for v, names, text in _verdicts(report)
    ]
    groups = report["failures"]
    if not groups:
        return out
    out += ["", f"**{_failures_heading(groups)}**", ""]
    out += ["| failures | cause or error | tests | cells |", "|---|---|---|---|"]
    for g in groups:
        tests = ", ".join(f"`{t}`" for t in g["tests"][:MD_TESTS])
        more = len(g["tests"]) - MD_TESTS
        tests += f" and {more} more (report.html)" if more > 0 else ""
        cells = "; ".join(
            f"{name} py{', '.join(py for py, _ in found)}"
            for name, found in _cells_by_release(g["cells"]).items()
        )
        example = f" <br>{_md_text(g['message'])}" if g["cause"] and g["message"] else ""
        out.append(f"| {g['count']} | {_md_text(g['title'])}{example} | {tests or '—'} | {cells} |")
    return out


def render_md(report: dict) -> str:
    columns = _columns(report)
    coverage = any(r["coverage"] for r in report["releases"])
    head = ["SDK", *(f"{v} py{py}" for v, py in columns), "patches"]
    head += ["patch coverage"] if coverage else []
    bases = " · ".join(f"{r['version']} `{r['base']}`" for r in report["releases"])
    out = ["### SDK compatibility (contract tests)", "", f"**{summary_line(report)}**", ""]
    out += [*_md_top(report), ""]
    out += [f"Trigger: `{report['trigger']}` · bases: {bases}", ""]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for rel in report["releases"]:
        row = [rel["version"]]
        for variant, py in columns:
            cell = _find(rel, variant, py)
            if cell is None:
                row.append("—")
                continue
            label = f"**{cell['label']}**" if cell["unexpected"] else cell["label"]
            row.append(f"{ICONS[cell['status']]} {_md_text(label)}")
        row += [str(rel["patches"] or "0 (baseline)")]
        row += [coverage_text(rel["coverage"])] if coverage else []
        out.append("| " + " | ".join(row) + " |")
    out += ["", " · ".join(_legend(ICONS.get))]
    out += ["", "| cause | upstream | affects | bug shown in |", "|---|---|---|---|"]
    for cause in report["causes"]:
        shown = len(cause["shown_in"])
        out.append(
            f"| `{cause['id']}`: {_md_text(cause['reason'])} | `{cause['commit']}` "
            f"(v{cause['release']}) | `{cause['affects']}` | {shown} cell{'s' * (shown != 1)} |"
        )
    return "\n".join(out) + "\n"


CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1f2328}
h1{font-size:22px;margin:0 0 8px} h2{font-size:17px;margin:28px 0 8px}
table{border-collapse:collapse;margin:6px 0} th,td{border:1px solid #d0d7de;padding:3px 8px;
text-align:left;vertical-align:top} th{background:#f6f8fa} a{color:inherit;text-decoration:none}
td a:hover{text-decoration:underline} .muted{color:#656d76} code{font-size:12px}
.passed{background:#dafbe1} .bug-shown,.bug{background:#ddf4ff} .skipped,.absent{background:#f6f8fa}
.failed,.xpass{background:#ffc1ba;font-weight:600} .obsolete{background:#fff1a8;font-weight:600}
.not-run,.unavailable{background:#f6f8fa;color:#656d76}
.partial,.interrupted{background:#ffe0b2;font-weight:600} .verdict-passed{background:#dafbe1}
.verdict-failed{background:#ffc1ba} .verdict-incomplete{background:#fff1a8}
.verdict-bug-shown{background:#ddf4ff}
.verdicts{list-style:none;padding:0;margin:8px 0} .verdicts li{margin:3px 0}
.groups td:first-child{text-align:right;font-weight:600} .groups td:nth-child(2){min-width:20em}
.groups td:nth-child(3){min-width:36em} .groups td:last-child{min-width:12em}
.groups code{overflow-wrap:anywhere}
.grid td{text-align:center;padding:1px 3px;white-space:nowrap} .grid td:first-child{text-align:left}
.grid th{font-size:11px;padding:2px 3px} .wide{overflow-x:auto;max-width:100%}
.grid th.v{writing-mode:vertical-rl;transform:rotate(180deg);text-align:left}
.pt{display:inline-block;width:15px;border-radius:3px;font-size:11px;font-weight:600;
text-align:center;margin:0 1px}
details{margin:4px 0} summary{cursor:pointer} .release{border:1px solid #d0d7de;border-radius:6px;
padding:4px 10px;margin:8px 0} pre{background:#f6f8fa;padding:6px;overflow:auto;max-height:260px;
font-size:12px;margin:4px 0}
"""
JS = """function openHash(){
var t=document.getElementById(decodeURIComponent(location.hash.slice(1)));
for(var e=t;e;e=e.parentElement)if(e.tagName=="DETAILS")e.open=true;if(t)t.scrollIntoView();}
addEventListener("hashchange",openHash);openHash();"""
# A contract point's outcome adds these to the cells' statuses.
POINT = {"absent": ("a", "API absent"), "skipped": ("s", "skipped")}
SYMBOLS = {**ICONS, **{k: symbol for k, (symbol, _) in POINT.items()}}


def _point_status(cell: dict | None, point: str) -> str | None:
    """A cell's outcome for one contract point; None when the cell does not exist."""
    if cell is None:
        return None
    if not cell["cases"] and cell["status"] in ("failed", "interrupted", "unavailable"):
        return cell["status"]  # it stopped before its tests
    outcomes = {c["outcome"] for c in cell["cases"] if c["point"] == point}
    for status, found in (("failed", "failed"), ("failed", "xpass"), ("bug-shown", "bug")):
        if found in outcomes:
            return status
    if not outcomes:
        return "not-run"
    if "passed" in outcomes:
        return "passed"
    return "absent" if "absent" in outcomes else "skipped"


def _worst(statuses: list[str | None]) -> str | None:
    order = ["failed", "interrupted", "bug-shown", "passed", "absent", "skipped", "unavailable",
             "not-run"]  # fmt: skip
    return next((s for s in order if s in statuses), None)


def render_html(report: dict) -> str:
    e = html.escape
    columns = _columns(report)
    points = sorted(
        {c["point"] for r in report["releases"] for cell in r["cells"] for c in cell["cases"]}
    )
    bases = ", ".join(f"{r['version']} <code>{e(r['base'])}</code>" for r in report["releases"])
    symbol = "<span class='pt {0}'>{1}</span>".format
    out = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        "<title>SDK compatibility report</title><style>" + CSS + "</style></head><body>",
        "<h1>SDK compatibility (contract tests)</h1>",
        f"<p><b class=verdict-{verdict(report)}>&nbsp;{e(summary_line(report))}&nbsp;</b>"
        f" · trigger <code>{e(report['trigger'])}</code></p>",
        *_html_top(report),
        f"<p class=muted>Bases: {bases}</p>",
        "<p class=muted>" + " · ".join(_legend(lambda k: symbol(k, SYMBOLS[k]), e)) + "</p>",
        "<h2>Matrix</h2><div class=wide><table><tr><th>SDK</th>",
    ]
    out += [f"<th>{v}<br><span class=muted>py{py}</span></th>" for v, py in columns]
    coverage = any(r["coverage"] for r in report["releases"])
    out.append("<th>patches</th>" + "<th>patch coverage</th>" * coverage + "</tr>")
    for rel in report["releases"]:
        v = e(rel["version"])
        out.append(f"<tr><th><a href='#r-{v}'>{v}</a></th>")
        for variant, py in columns:
            cell = _find(rel, variant, py)
            if cell is None:
                out.append("<td class=muted>—</td>")
            else:
                text = f"{SYMBOLS[cell['status']]} {e(cell['label'])}"
                out.append(
                    f"<td class={cell['status']}><a href='#c-{e(cell['key'])}'>{text}</a></td>"
                )
        out.append(f"<td>{rel['patches'] or '0 (baseline)'}</td>")
        out.append(f"<td>{coverage_text(rel['coverage'])}</td>" * coverage + "</tr>")
    out.append("</table></div>")

    out.append(
        "<h2>Contract points</h2><p class=muted>Per release: unpatched | patched, over every Python"
        " that ran (worst outcome); click for the release. "
        + " · ".join(f"{symbol(k, s)} {word}" for k, (s, word) in POINT.items())
        + ": every test of the point, in every Python, lacked an API the release does not have"
        " (compat_tests/expectations.toml [[absent]]) or was skipped.</p>"
        "<div class=wide><table class=grid><tr><th>point</th>"
    )
    out += [
        f"<th class=v><a href='#r-{e(r['version'])}'>{e(r['version'])}</a></th>"
        for r in report["releases"]
    ]
    out.append("</tr>")
    for point in points:
        out.append(f"<tr><td><a href='#p-{e(point)}'>{e(point)}</a></td>")
        for rel in report["releases"]:
            spans = []
            for variant in ("unpatched", "patched"):
                status = _worst(
                    [_point_status(_find(rel, variant, py), point) for _, py in columns]
                )
                if status:
                    word = POINT[status][1] if status in POINT else status
                    title = f"{rel['version']} {variant}: {word}"
                    spans.append(
                        f"<span class='pt {status}' title='{e(title)}'>{SYMBOLS[status]}</span>"
                    )
            out.append(f"<td><a href='#r-{e(rel['version'])}'>{''.join(spans)}</a></td>")
        out.append("</tr>")
    out.append("</table></div>")

    out.append("<h2>Causes</h2><table><tr><th>cause</th><th>upstream</th><th>affects</th>")
    out.append("<th>bug shown in</th></tr>")
    for cause in report["causes"]:
        cells = ", ".join(f"<a href='#c-{e(k)}'>{e(k)}</a>" for k in cause["shown_in"])
        out.append(
            f"<tr><td><code>{e(cause['id'])}</code>: {e(cause['reason'])}</td>"
            f"<td><code>{e(cause['commit'])}</code> (v{e(cause['release'])})</td>"
            f"<td><code>{e(cause['affects'])}</code></td><td>{cells or 'no cell'}</td></tr>"
        )
    out.append("</table>")
    out.append("<h2>By contract point</h2>")
    for point in points:
        out += _point_html(report, point, columns)
    out.append("<h2>By release</h2>")
    for rel in report["releases"]:
        out += _release_html(rel, columns, points)
    out.append("<script>" + JS + "</script></body></html>")
    return "\n".join(out) + "\n"


def _html_top(report: dict) -> list[str]:
    """What a reader wants first: a verdict per release, and the unexpected failures grouped."""
    e = html.escape
    out = ["<ul class=verdicts>"]
    for v, names, text in _verdicts(report):
        links = ", ".join(f"<a href='#r-{e(n)}'>{e(n)}</a>" for n in names)
        out.append(
            f"<li><b class=verdict-{v}>&nbsp;{VERDICT_ICONS[v]} {links}&nbsp;</b> {e(text)}</li>"
        )
    out.append("</ul>")
    groups = report["failures"]
    if not groups:
        return out
    out.append(f"<h2>{_failures_heading(groups)}</h2>")
    out.append("<table class=groups><tr><th>failures</th><th>cause or error</th><th>tests</th>"
               "<th>cells</th></tr>")  # fmt: skip
    for g in groups:
        tests = "<br>".join(f"<code>{e(t)}</code>" for t in g["tests"]) or "—"
        if len(g["tests"]) > MD_TESTS:
            tests = f"<details><summary>{len(g['tests'])} tests</summary>{tests}</details>"
        cells = "<br>".join(
            f"{e(name)} py" + ", ".join(f"<a href='#c-{e(k)}'>{e(py)}</a>" for py, k in found)
            for name, found in _cells_by_release(g["cells"]).items()
        )
        example = (f"<br><span class=muted>{e(g['message'])}</span>"
                   if g["cause"] and g["message"] else "")  # fmt: skip
        out.append(f"<tr><td>{g['count']}</td><td>{e(g['title'])}{example}</td><td>{tests}</td>"
                   f"<td>{cells}</td></tr>")  # fmt: skip
    return out + ["</table>"]


def _point_cell(cell: dict | None, point: str) -> str:
    """One table cell: a cell's outcome for one point, its failing tests as the tooltip."""
    status = _point_status(cell, point)
    if status is None:
        return "<td class=muted>—</td>"
    cases = [c for c in cell["cases"] if c["point"] == point]
    n = Counter(c["outcome"] for c in cases)
    text = ", ".join(f"{n[k]} {w}" for k, w in WORDS.items() if n[k]) or "not run"
    tip = "\n".join(f"{WORDS[c['outcome']]}: {c['id']}" for c in cases if c["outcome"] != "passed")
    link = f"<a href='#c-{html.escape(cell['key'])}' title='{html.escape(tip)}'>"
    return f"<td class={status}>{link}{SYMBOLS[status]} {html.escape(text)}</a></td>"


def _point_html(report: dict, point: str, columns: list[tuple[str, str]]) -> list[str]:
    e = html.escape
    found = [_find(rel, v, py) for rel in report["releases"] for v, py in columns]
    bad = any(_point_status(cell, point) == "failed" for cell in found)
    out = [f"<details class=release id='p-{e(point)}'><summary><b>{e(point)}</b>"]
    out.append(f" <span class=muted>compat_tests/test_{e(point)}.py</span>")
    out.append(
        (" · <span class=failed>&nbsp;unexpected&nbsp;</span>" if bad else "") + "</summary>"
    )
    out.append("<table class=grid>")
    out.append(
        "<tr><th>SDK</th>" + "".join(f"<th>{v}<br>py{py}</th>" for v, py in columns) + "</tr>"
    )
    for rel in report["releases"]:
        out.append(f"<tr><td><a href='#r-{e(rel['version'])}'>{e(rel['version'])}</a></td>")
        out += [_point_cell(_find(rel, v, py), point) for v, py in columns]
        out.append("</tr>")
    return out + ["</table></details>"]


def _series_text(patches: int) -> str:
    return f"series of {patches} patch{'es' if patches > 1 else ''}" if patches else "no series"


def _release_html(rel: dict, columns: list[tuple[str, str]], points: list[str]) -> list[str]:
    e = html.escape
    cells = [c for c in (_find(rel, v, py) for v, py in columns) if c]
    statuses = {c["status"] for c in cells}
    worst = next((s for s in ("failed", "obsolete") if s in statuses), "")
    cov = rel["coverage"]
    out = [
        f"<details class=release id='r-{e(rel['version'])}'><summary><b>{e(rel['version'])}</b>"
        f" · base <code>{e(rel['base'])}</code> · {_series_text(rel['patches'])}"
        + (f" · patch coverage {coverage_text(cov)}" if cov else "")
        + (f" · <span class={worst}>&nbsp;unexpected&nbsp;</span>" if worst else "")
        + "</summary>"
    ]
    if cov and cov["missed"]:
        missed = "; ".join(f"{e(p)}: {', '.join(map(str, ns))}" for p, ns in cov["missed"].items())
        out.append(f"<p class=muted>Added lines the tests do not run: {missed}</p>")
    out.append("<table class=grid><tr><th>point</th>")
    out += [
        f"<th><a href='#c-{e(c['key'])}'>{c['variant']}<br>py{c['python']}</a></th>" for c in cells
    ]
    out.append("</tr>")
    for point in points:
        out.append(f"<tr><td><a href='#p-{e(point)}'>{e(point)}</a></td>")
        out += [_point_cell(cell, point) for cell in cells] + ["</tr>"]
    out.append("</table>")
    for cell in cells:
        out.append(
            f"<details id='c-{e(cell['key'])}'><summary class={cell['status']}>"
            f"{SYMBOLS[cell['status']]} <code>{e(cell['key'])}</code>: {e(cell['label'])}</summary>"
        )
        if cell["reason"]:
            out.append(f"<pre>{e(cell['reason'])}</pre>")
        if cell["cases"]:
            out.append("<table><tr><th>test</th><th>outcome</th><th>message</th></tr>")
            for case in sorted(cell["cases"], key=lambda c: list(WORDS).index(c["outcome"])):
                shown = case.get("detail", "").strip() not in ("", case["message"].strip())
                detail = f"<pre>{e(case['detail'])}</pre>" if shown else ""
                outcome = WORDS[case["outcome"]]
                out.append(
                    f"<tr><td><code>{e(case['id'])}</code></td>"
                    f"<td class={case['outcome']}>{outcome}</td>"
                    f"<td>{e(_first_line(case['message'], 300))}{detail}</td></tr>"
                )
            out.append("</table>")
        out.append("</details>")
    out.append("</details>")
    return out


REPORTS = ("report.md", "report.html", "report.json")


def write_reports(build: Path = COMPAT, patches: Path = PATCHES, matrix=None) -> dict:
    """report.md (appended to $GITHUB_STEP_SUMMARY when set), report.html and report.json.

    All three are rendered before any is written, and each is replaced whole. A report that
    cannot be rendered removes the previous one, so that none is left looking current.
    """
    try:
        cells = collect(build, patches, matrix)
        coverage = {v: patch_coverage(v, build, patches) for v in patched_versions(patches)}
        report = build_report(cells, os.environ.get("GITHUB_EVENT_NAME") or "local", coverage)
        md = render_md(report)
        texts = [md, render_html(report), json.dumps(report, indent=1, ensure_ascii=False)]
    except Exception as exc:
        for name in REPORTS:
            (build / name).unlink(missing_ok=True)
        if not isinstance(exc, MatrixError):
            raise
        md = f"**report could not be rendered: {exc}**\n"
        _step_summary(md)
        raise MatrixError(md.strip("*\n")) from None
    for name, text in zip(REPORTS, texts):
        write_atomically(build / name, text.encode())
    _step_summary(md)
    return report


def _step_summary(md: str) -> None:
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as summary:
            summary.write(md)
