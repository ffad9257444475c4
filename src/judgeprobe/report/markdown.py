"""The Judge Card as Markdown (CommonMark with GitHub tables): a short card and its appendix.

``card.md`` (:func:`render_markdown`) reads at a glance: the overview figure, the verdict in one
sentence, the findings that matter most, one line per probe, what fails or warns, and links.
Everything else, what was tested and every probe's full findings, slices, evidence, tables and
calls, is in ``card-appendix.md`` (:func:`render_appendix`) beside it.

Every value taken from the card goes through :func:`escape_markdown` (or into a fenced code
block sized to its content), so dataset and model text shows as text: no link, image or HTML can
come from it. Table cells are truncated; the full text stays in the card's JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe.report.estimate import ESTIMATE_COLUMNS, estimate_rows, estimate_sentence
from judgeprobe.report.evidence_view import evidence_view
from judgeprobe.report.figures import figure_stem
from judgeprobe.report.overview import gated_findings, top_findings, verdict_sentence
from judgeprobe.report.overview_figure import OVERVIEW_STEM
from judgeprobe.report.repair import REPAIR_COLUMNS, repair_line, repair_rows
from judgeprobe.report.rounds import ROUND_COLUMNS, round_rows, rounds_sentence
from judgeprobe.report.text import escape_markdown, fenced, fmt_number, humanize
from judgeprobe.report.view import (
    SKIPPED_COLUMNS,
    STATUS_WORDS,
    USAGE_ROWS,
    data_rows,
    descriptions,
    engine_rows,
    interval_text,
    labels_text,
    params_text,
    skipped_rows,
    status_text,
    tabulate,
    threshold_text,
    value_text,
)

CELL_LENGTH = 160
SENTENCE_LENGTH = 400
NOTE_LENGTH = 600


FLAGGED_LISTED = 10
"""Failing and warning findings the short card lists (the appendix lists them all)."""
APPENDIX_FILE = "card-appendix.md"
"""The appendix's file name, beside ``card.md`` (the card links to it)."""


def render_markdown(card: Mapping[str, Any]) -> str:
    """The short card as a Markdown document: summary, headline findings, links to the rest."""
    run = card["run"]
    summary = card["summary"]
    lines = [f"# {_e(card['title'])}", "", _meta(card), ""]
    if gated_findings(card):
        lines += [f"![Every gated finding against its thresholds]({OVERVIEW_STEM}.png)", ""]
    lines += [f"**Verdict:** {_e(verdict_sentence(card), None)}", ""]
    lines += [_e(summary["headline"], None), ""]
    lines += ["## The findings that matter most", ""]
    top = top_findings(card)
    for number, (probe, finding) in enumerate(top, 1):
        evidence = evidence_view(finding)
        seen = f" (evidence: {evidence.summary})" if evidence is not None else ""
        lines.append(
            f"{number}. {STATUS_WORDS[finding['status']]} {_e(probe['name'])}: "
            f"{_e(finding['sentence'], SENTENCE_LENGTH)}{_e(seen)}"
        )
    lines += [""] if top else ["No gated finding fails, warns or is undecided.", ""]
    lines += [
        "Most important first: decided fails, the one whose confidence interval clears its"
        " threshold by the widest margin first; then warns, the same way; then inconclusive"
        " findings, the one nearest to being decided first.",
        "",
        "## Probes",
        "",
    ]
    lines += _table(
        ("Probe", "Kind", "Verdict", "Evidence (worst headline finding)", "Details"),
        [
            (
                p["name"],
                p["kind"],
                STATUS_WORDS[p["status"]],
                p["sentence"],
                f"[appendix]({APPENDIX_FILE}#{_heading_anchor(_probe_heading(p['name']))})",
            )
            for p in summary["probes"]
        ],
        max_len=SENTENCE_LENGTH,
        raw_last=True,
    )
    flagged = [s for s in summary["statements"] if s["status"] in ("fail", "warn")]
    if flagged:
        lines += ["**What fails or warns**", ""]
        lines += [
            f"- {STATUS_WORDS[s['status']]} {_e(s['probe'])}: {_e(s['sentence'], SENTENCE_LENGTH)}"
            for s in flagged[:FLAGGED_LISTED]
        ]
        if len(flagged) > FLAGGED_LISTED:
            lines.append(f"- ... and {len(flagged) - FLAGGED_LISTED} more in the appendix")
        lines.append("")
    rest = [s["status"] for s in summary["statements"]]
    said = [
        f"{rest.count(status)} {words}"
        for status, words in (
            ("inconclusive", "inconclusive (not counted as failures)"),
            ("n/a", "not assessable"),
        )
        if rest.count(status)
    ]
    if said:
        lines += [f"{' and '.join(said)}: listed in the appendix.", ""]
    if card.get("repair"):
        lines += _repair_summary(card["repair"])
    if card.get("estimate"):
        lines += _estimate(card["estimate"])
    lines += [
        "## More",
        "",
        f"- [The appendix]({APPENDIX_FILE}): what was tested, every finding with its slices and"
        " evidence, the probes' tables, calls and tokens.",
        "- card.html: the same card as one page, every part folded under its heading;"
        " card.json: all of it as data.",
        "",
    ]
    lines += _footer(card, run)
    return "\n".join(lines)


def render_appendix(card: Mapping[str, Any]) -> str:
    """The card's appendix as Markdown: everything the short card leaves out, in full tables."""
    lines = [
        f"# Appendix: {_e(card['title'])}",
        "",
        _meta(card),
        "",
        "The short card is [card.md](card.md); this appendix holds the full tables.",
        "",
    ]
    lines += _summary(card["summary"])
    lines += _tested(card["tested"])
    for probe in card["probes"]:
        lines += _probe(probe)
    if card.get("rounds"):
        lines += _rounds(card["rounds"])
    if card.get("repair"):
        lines += ["## Repair", "", _e(card["repair"]["headline"], None), ""]
        lines += _repair_tables(card["repair"], "###")
    lines += _usage(card["usage"])
    lines += _footer(card, card["run"])
    return "\n".join(lines)


def render_repair_markdown(repair: Mapping[str, Any]) -> str:
    """The card's ``repair`` section on its own page (``repair.md``, beside ``card.md``): the
    same tables as the card's appendix."""
    lines = [
        "# Judge repair: before and after",
        "",
        "The Judge Card ([card.md](card.md), its [appendix](card-appendix.md#repair), card.html)"
        " shows the same section; the comparison of every probe is in each repair's comparison.",
        "",
        _e(repair["headline"], None),
        "",
    ]
    return "\n".join(lines + _repair_tables(repair, "##"))


def _repair_summary(repair: Mapping[str, Any]) -> list[str]:
    """The short card's repair lines: one per repair, the tables left to the appendix."""
    lines = [
        "## Repair",
        "",
        "Each repaired judge was audited with the same probes, data and seed; before and after on"
        " the probe it targets (difference: repaired minus original, with its confidence"
        f" interval). The tables are in [the appendix]({APPENDIX_FILE}#repair).",
        "",
    ]
    for entry in repair["repairs"]:
        lines.append(f"- {_e(repair_line(entry), None)}{_repair_links(entry)}")
    return [*lines, ""]


def _estimate(section: Mapping[str, Any]) -> list[str]:
    """The short card's estimate: the judge's rate, the humans' and the corrected one."""
    lines = ["## The rate the humans would give", "", _e(estimate_sentence(section), None), ""]
    lines += _table(ESTIMATE_COLUMNS, estimate_rows(section))
    lines += [f"- {_e(note, NOTE_LENGTH)}" for note in section["notes"]]
    return [*lines, ""] if section["notes"] else lines


def _repair_tables(repair: Mapping[str, Any], level: str) -> list[str]:
    """Each repair's heading, cost, repaired verdict, links and its target's findings table."""
    lines: list[str] = []
    for entry in repair["repairs"]:
        cost = entry["cost_multiplier"]
        lines += [
            f"{level} {_e(entry['repair'])} (targets {_e(entry['target_probe'])})",
            "",
            f"Cost multiplier: {fmt_number(cost)} inner judge calls per verdict."
            f"{_repair_links(entry)}",
            "",
            f"Repaired card: {_e(entry['verdict']['sentence'], SENTENCE_LENGTH)}",
            "",
        ]
        if entry["target_findings"]:
            lines += _table(REPAIR_COLUMNS, repair_rows(entry))
        else:
            lines += [f"The {_e(entry['target_probe'])} probe was not audited.", ""]
    return lines


def _repair_links(entry: Mapping[str, Any]) -> str:
    """`` ([repaired card](...), [comparison](...))`` for the links the card holds (checked to
    be plain relative folders when the card was built)."""
    links = entry["links"]
    parts = [
        f"[{label}]({links[key]}/{page})"
        for key, label, page in (
            ("card", "repaired card", "card.md"),
            ("comparison", "comparison", "compare.md"),
        )
        if links.get(key)
    ]
    return f" ({', '.join(parts)})" if parts else ""


def _meta(card: Mapping[str, Any]) -> str:
    run = card["run"]
    return (
        f"**Overall: {STATUS_WORDS[card['summary']['overall']]}** · run {run['id']} · "
        f"{_e(run['state'])} · started {_e(run['started_at'])} · card version "
        f"{_e(card['card_version'])}"
    )


def _footer(card: Mapping[str, Any], run: Mapping[str, Any]) -> list[str]:
    generator = card["generator"]
    return [
        "---",
        "",
        f"Rendered by {_e(generator['tool'])} {_e(generator['version'])} from run store "
        f"{_e(run['store'])}. Text from the data and the judge is escaped and shortened here; "
        "the card's JSON holds it in full.",
        "",
    ]


def _probe_heading(name: str) -> str:
    return f"Probe: {name}"


def _heading_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    kept = "".join(c for c in heading.lower() if c.isascii() and (c.isalnum() or c in " _-"))
    return kept.replace(" ", "-")


def _summary(summary: Mapping[str, Any]) -> list[str]:
    lines = ["## Summary", "", _e(summary["headline"], None), ""]
    lines += _table(
        ("Probe", "Kind", "Verdict", "Evidence (worst headline finding)"),
        [
            (p["name"], p["kind"], STATUS_WORDS[p["status"]], p["sentence"])
            for p in summary["probes"]
        ],
        max_len=SENTENCE_LENGTH,
    )
    flagged = [s for s in summary["statements"] if s["status"] in ("fail", "warn")]
    if flagged:
        lines += ["**What fails or warns**", ""]
        lines += [
            f"- {STATUS_WORDS[s['status']]} {_e(s['probe'])}: {_e(s['sentence'], SENTENCE_LENGTH)}"
            for s in flagged
        ]
        lines.append("")
    undecided = [s for s in summary["statements"] if s["status"] == "inconclusive"]
    if undecided:
        lines += ["**Inconclusive (not counted as failures)**", ""]
        lines += [f"- {_e(s['probe'])}: {_e(s['sentence'], SENTENCE_LENGTH)}" for s in undecided]
        lines.append("")
    missing = [s for s in summary["statements"] if s["status"] == "n/a"]
    if missing:
        lines += ["**Not assessable**", ""]
        lines += [f"- {_e(s['probe'])}: {_e(s['sentence'], SENTENCE_LENGTH)}" for s in missing]
        lines.append("")
    if summary["kinds"]:
        lines += ["**What each kind of probe asks**", ""]
        lines += [
            f"- {_e(k['kind'])} ({STATUS_WORDS[k['status']]}): {_e(k['question'])}"
            for k in summary["kinds"]
        ]
        lines.append("")
    lines += [
        "A finding passes, warns or fails when its whole confidence interval lies on one side of"
        " the threshold shown with it; it is *inconclusive* when the interval straddles a"
        " threshold (more data would decide it, and it never fails the gate); *borderline* marks"
        " a warning whose interval reaches into fail; findings without a threshold are for"
        " information.",
        "",
    ]
    return lines


def _tested(tested: Mapping[str, Any]) -> list[str]:
    judge = tested["judge"]
    rubric = tested["rubric"]
    lines = ["## What was tested", "", "### Judge", ""]
    rows: list[tuple[Any, ...]] = [
        ("model", judge["model"]),
        ("backend", judge["backend"]),
        ("revision", value_text(judge["revision"])),
        ("fingerprint", judge["fingerprint"]),
    ]
    rows += [(f"decoding: {k}", value_text(v)) for k, v in judge["decoding"].items()]
    coverage = judge["description"].get("coverage")
    if isinstance(coverage, Mapping):  # recorded verdicts: their source, what it and the data lack
        source = judge["description"]
        rows += [
            (f"recorded: {k}", value_text(source[k]))
            for k in ("format", "file", "vote_source")
            if source.get(k)
        ]
        rows += [(f"recorded: {k}", value_text(v)) for k, v in coverage.items()]
    lines += _table(("", ""), rows)
    lines += ["### Rubric", ""]
    lines += _table(
        ("", ""),
        [(k, value_text(rubric.get(k))) for k in ("name", "kind", "hash", "decision")],
    )
    if rubric.get("template"):
        lines += ["Template:", "", fenced(str(rubric["template"])), ""]
    lines += ["### Data", ""]
    lines += _table(("", ""), data_rows(tested["data"]))
    lines += _skipped(tested)
    lines += ["### Probes and parameters", ""]
    lines += _table(
        ("Probe", "Parameters"),
        [(name, params_text(params)) for name, params in tested["probes"].items()],
        max_len=SENTENCE_LENGTH,
    )
    if tested.get("not_applicable"):
        lines += ["Not applicable to this judge, so not run:", ""]
        left_out = tested["not_applicable"].items()
        lines += [f"- {_e(name)}: {_e(why, NOTE_LENGTH)}" for name, why in left_out]
        lines += [""]
    if tested["thresholds"]:
        lines += ["### Configured thresholds", ""]
        lines += _table(
            ("Finding", "Warn", "Fail", "Worse when", "Set by"),
            [
                (
                    name,
                    fmt_number(t["warn"]),
                    fmt_number(t["fail"]),
                    "higher" if t["higher_is_worse"] else "lower",
                    t["source"],
                )
                for name, t in tested["thresholds"].items()
            ],
        )
    lines += ["### Reproduce", ""]
    lines += _table(
        ("", ""),
        [("seed", value_text(tested["seed"])), ("judgeprobe version", tested["tool_version"])],
    )
    if tested["command"]:
        lines += [fenced(str(tested["command"]), "sh"), ""]
    return lines


def _skipped(tested: Mapping[str, Any]) -> list[str]:
    count, rows, left_out = skipped_rows(tested)
    if not count:
        return []
    lines = [
        "### Rows left out of the data",
        "",
        f"{count} data row{'s' if count != 1 else ''} could not be loaded and "
        f"{'were' if count != 1 else 'was'} left out:",
        "",
    ]
    lines += _table(SKIPPED_COLUMNS, rows)
    if left_out:
        lines += [f"({left_out} more in the card's JSON and the run store)", ""]
    return lines


def _probe(probe: Mapping[str, Any]) -> list[str]:
    status = STATUS_WORDS[probe["status"]]
    lines = [f"## {_e(_probe_heading(probe['name']))}", ""]
    lines += [f"**{status}** ({_e(probe['kind'])})", ""]
    if probe["question"]:
        lines += [f"*{_e(probe['question'])}*", ""]
    if probe["params"]:
        lines += [f"Parameters: {_e(params_text(probe['params'], NOTE_LENGTH), None)}", ""]
    lines += _table(
        ("Finding", "Slice", "Estimate", "CI", "n", "Threshold", "Status"),
        [
            (
                humanize(f["name"]),
                labels_text(f["labels"]),
                fmt_number(f["estimate"]),
                interval_text(f["ci"], f.get("reason")),
                f["n"],
                threshold_text(f),
                status_text(f),
            )
            for f in probe["findings"]
        ],
    )
    described = descriptions(probe["findings"])
    if described:
        lines += [f"- {_e(humanize(n))}: {_e(d, SENTENCE_LENGTH)}" for n, d in described]
        lines.append("")
    for finding in probe["findings"]:
        lines += _evidence(finding)
    for figure in probe["figures"]:
        stem = figure_stem(figure)
        if stem is not None:
            lines += [f"![{_e(figure['title'], 120)}]({stem}.png)", ""]
    if probe["notes"]:
        lines += ["Notes:", ""]
        lines += [f"- {_e(note, NOTE_LENGTH)}" for note in probe["notes"]]
        lines.append("")
    lines += ["Calls:", ""]
    usage = probe["usage"]
    lines += _table(("", "count"), [(label, usage.get(key, 0)) for key, label in USAGE_ROWS])
    for name, table in probe["tables"].items():
        columns, rows, left_out = tabulate(table)
        lines += [f"Table: {_e(name)}", ""]
        lines += _table(columns, rows)
        if left_out:
            lines += [f"({left_out} more rows in the card's JSON)", ""]
    return lines


def _evidence(finding: Mapping[str, Any]) -> list[str]:
    """The items behind ``finding`` as a table (nothing when it keeps none)."""
    evidence = evidence_view(finding)
    if evidence is None or not evidence.items:
        return []
    labels = labels_text(finding["labels"])
    title = humanize(finding["name"]) + (f" ({labels})" if labels else "")
    lines = [f"Evidence for {_e(title)}: {_e(evidence.summary)}", ""]
    lines += _table(
        ("Item", "Text (excerpt)", "Verdicts", "Raw answers"),
        [
            (
                item.item_id,
                item.excerpt,
                "; ".join(
                    f"{v.role}: {v.label or 'no label'}" + (f" ({v.score})" if v.score else "")
                    for v in item.verdicts
                ),
                "; ".join(f"{v.role}: {v.raw}" for v in item.verdicts if v.raw),
            )
            for item in evidence.items
        ],
        max_len=SENTENCE_LENGTH,
    )
    if evidence.rest:
        lines += [f"({evidence.rest} more behind this finding, not kept in the card)", ""]
    return lines


def _rounds(rounds: Mapping[str, Any]) -> list[str]:
    lines = ["## Rounds", "", _e(rounds_sentence(rounds), NOTE_LENGTH), ""]
    return lines + _table([label for _, label in ROUND_COLUMNS], round_rows(rounds))


def _usage(usage: Mapping[str, Any]) -> list[str]:
    lines = ["## Calls and tokens", ""]
    if usage["engine"]:
        lines += ["Across the run (a request shared by probes is judged once):", ""]
        lines += _table(("", "count"), engine_rows(usage["engine"]))
    lines += ["Summed over probes (a request shared by probes counts in each):", ""]
    probes = usage["probes"]
    lines += _table(("", "count"), [(label, probes.get(key, 0)) for key, label in USAGE_ROWS])
    return lines


def _table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    max_len: int = CELL_LENGTH,
    raw_last: bool = False,
) -> list[str]:
    """A GitHub table; ``raw_last``: the last column is Markdown made here (a link), not data."""
    if not rows:
        return ["(none)", ""]
    out = [
        "| " + " | ".join(_e(h) for h in headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    for row in rows:
        cells = [_cell(c, max_len) for c in (row[:-1] if raw_last else row)]
        out.append("| " + " | ".join([*cells, *([str(row[-1])] if raw_last else [])]) + " |")
    return [*out, ""]


def _cell(value: Any, max_len: int) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return fmt_number(value)
    return _e("" if value is None else value, max_len)


def _e(value: Any, max_len: int | None = CELL_LENGTH) -> str:
    return escape_markdown(value, max_len=max_len)
