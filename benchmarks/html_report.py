"""``report.html`` of a benchmark run: one self-contained page (inline CSS and SVG, no script,
nothing fetched), written beside ``report.md`` by every ``guard bench run``.

Per suite: the guard's paper-compatible figures beside the papers' (with their 95% intervals),
the per-category precision/recall table, the confusion of the expected label with what the guard
flagged, the calibration of the findings' confidence (share of positives per confidence bin) and
the recall vs false-interrupt curve traced by a confidence threshold. Everything is computed from
``results.json`` and the cases of ``cases.jsonl``; every value is escaped.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from html import escape
from typing import Any

from guard_bench.report import suites_of
from guard.replay.report import _CSS

#: Confidence bins of the calibration table (lower bounds; the last bin includes 1.0).
BINS = (0.0, 0.5, 0.7, 0.9, 0.95)
#: Thresholds of the recall vs false-interrupt curve.
THRESHOLDS = tuple(i / 20 for i in range(21))


def render(run: Mapping[str, Any], figures: Mapping[str, Iterable[Any]], cases: Iterable[Mapping[str, Any]], command: str = "") -> str:
    suites = suites_of(dict(run))
    by_suite: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for case in cases:
        by_suite[str(case.get("suite"))].append(case)
    first = next(iter(suites.values()), {})
    policy = first.get("policy") or {}
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>guard benchmark: {escape(', '.join(suites))}</title><style>{_CSS}</style></head><body>",
        f"<header id='summary'><h1>guard benchmark ({escape(str(run.get('split', first.get('split', ''))))} split)</h1>"
        f"<p class='meta'>policy <b>{escape(str(policy.get('name')))}</b> ({escape(str(policy.get('sha256', ''))[:12])}); "
        f"command <code>{escape(command)}</code></p></header>",
        _headline(suites, figures),
    ]
    for name, result in suites.items():
        parts.append(_suite(name, result, by_suite.get(name, [])))
    parts.append("</body></html>")
    return "\n".join(parts)


def _fmt(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else "–"


def _ci(entry: Any) -> str:
    ci = entry.get("ci95") if isinstance(entry, Mapping) else entry
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and all(isinstance(v, (int, float)) for v in ci):
        return f" [{ci[0]:.2f}, {ci[1]:.2f}]"
    return ""


def _headline(suites: Mapping[str, Mapping[str, Any]], figures: Mapping[str, Iterable[Any]]) -> str:
    rows = []
    for name, result in suites.items():
        papers: dict[str, list[Any]] = defaultdict(list)
        for f in figures.get(name, []):
            papers[f.metric].append(f)
        for metric, value in (result.get("paper_metrics") or {}).items():
            theirs = "; ".join(f"{escape(f.model)} {f.value:.3f}" + (" (rebuilt)" if f.rebuilt else "") for f in papers.get(metric, [])) or "–"
            ci = _ci((result.get("paper_ci95") or {}).get(metric))
            rows.append(f"<tr><td class='name'>{escape(name)}</td><td class='name'>{escape(metric)}</td>"
                        f"<td style='white-space:nowrap'>{_fmt(value)}{escape(ci)}</td><td class='name'>{theirs}</td></tr>")
    return ("<h2>Headline figures beside the papers'</h2><table id='headline'><tr><th class='name'>suite</th>"
            "<th class='name'>metric</th><th>guard [95% CI]</th><th class='name'>papers</th></tr>" + "".join(rows) + "</table>")


def _suite(name: str, result: Mapping[str, Any], cases: list[Mapping[str, Any]]) -> str:
    anchor = "suite-" + "".join(c if c.isalnum() else "-" for c in name)
    fi = result.get("false_interrupt_rate") or {}
    rec = result.get("recovery") or {}
    lat = result.get("latency_ms") or {}
    cards = [
        ("cases", f"{result.get('n_cases', 0):,}"),
        ("false interrupts", f"{_fmt(fi.get('value'))}{_ci(fi)}" if isinstance(fi, Mapping) else _fmt(fi)),
        ("recovered", _fmt(rec.get("recovered_rate"))),
        ("latency p50 / p99 ms", f"{_fmt(lat.get('p50'))} / {_fmt(lat.get('p99'))}"),
        ("errors", f"{result.get('n_errors', 0):,}"),
    ]
    head = "".join(f"<div class='card'><b>{escape(v)}</b>{escape(k)}</div>" for k, v in cards)
    cat_rows = "".join(
        f"<tr><td class='name'>{escape(label)}</td><td>{c.get('n', 0)}</td><td>{c.get('tp', 0)}</td><td>{c.get('fp', 0)}</td>"
        f"<td>{c.get('fn', 0)}</td><td>{_fmt(c.get('precision'))}</td><td>{_fmt(c.get('recall'))}</td><td>{_fmt(c.get('f1'))}</td></tr>"
        for label, c in (result.get("categories") or {}).items()
    )
    categories = ("<table class='categories'><tr><th class='name'>label</th><th>n</th><th>tp</th><th>fp</th><th>fn</th>"
                  f"<th>precision</th><th>recall</th><th>F1</th></tr>{cat_rows}</table>")
    return (f"<section class='suite' id='{anchor}'><h2>{escape(name)}</h2><div class='cards'>{head}</div>"
            f"<h3>Per category</h3>{categories}{_confusion(cases)}{_calibration(cases)}{_curve(cases, anchor)}</section>")


def _expected(case: Mapping[str, Any]) -> str:
    expected = case.get("expected") or {}
    return str(expected.get("label") or "ok")


def _got(case: Mapping[str, Any]) -> str:
    if case.get("error"):
        return "error"
    if not case.get("flagged"):
        return "not flagged"
    predicted = case.get("predicted") or []
    return ", ".join(sorted(map(str, predicted))) or "flagged (other)"


def _confusion(cases: list[Mapping[str, Any]]) -> str:
    if not cases:
        return ""
    table = Counter((_expected(c), _got(c)) for c in cases)
    rows_keys = sorted({e for e, _ in table})
    cols = sorted({g for _, g in table}, key=lambda g: (g != "not flagged", g))
    head = "".join(f"<th>{escape(c)}</th>" for c in cols)
    body = "".join(
        f"<tr><th class='name'>{escape(r)}</th>" + "".join(f"<td>{table.get((r, c), 0) or ''}</td>" for c in cols) + "</tr>"
        for r in rows_keys
    )
    return (f"<h3>Expected label × what the guard flagged</h3><table class='confusion'><tr><th class='name'>expected \\ flagged</th>"
            f"{head}</tr>{body}</table>")


def _confidence(case: Mapping[str, Any]) -> float | None:
    """The highest confidence among the findings of the decision scored (None without a finding)."""
    values = [f.get("confidence", 1.0) for f in case.get("findings") or [] if isinstance(f, Mapping)]
    values = [v for v in values if isinstance(v, (int, float))]
    return max(values) if values else None


def _calibration(cases: list[Mapping[str, Any]]) -> str:
    """Per confidence bin of the flagged decisions: how many, and the share whose case is a true
    positive (a labelled error, not a clean case)."""
    bins: dict[int, list[bool]] = defaultdict(list)
    for case in cases:
        conf = _confidence(case)
        if conf is None or not case.get("flagged"):
            continue
        i = max(j for j, lo in enumerate(BINS) if conf >= lo)
        bins[i].append(_expected(case) != "ok")
    if not bins:
        return ""
    rows, points = [], []
    for i, lo in enumerate(BINS):
        hits = bins.get(i, [])
        hi = BINS[i + 1] if i + 1 < len(BINS) else 1.0
        share = sum(hits) / len(hits) if hits else None
        rows.append(f"<tr><td class='name'>[{lo:.2f}, {hi:.2f}{']' if hi == 1.0 else ')'}</td><td>{len(hits)}</td><td>{_fmt(share)}</td></tr>")
        if share is not None:
            points.append(((lo + hi) / 2, share, len(hits)))
    svg = _plot([("share positive", [(x, y) for x, y, _ in points], "#2a6fdb")], "confidence", "share positive", diagonal=True, dots=True)
    return ("<h3>Calibration of the findings' confidence</h3><table class='calibration'><tr><th class='name'>confidence</th>"
            f"<th>flagged</th><th>share positive</th></tr>{''.join(rows)}</table>{svg}")


def _curve(cases: list[Mapping[str, Any]], anchor: str) -> str:
    """Recall vs false interrupts as the confidence a flag needs rises from 0 to 1."""
    positives = [c for c in cases if _expected(c) != "ok"]
    clean = [c for c in cases if _expected(c) == "ok"]
    if not positives or not clean:
        return ""

    def flagged(case: Mapping[str, Any], t: float) -> bool:
        conf = _confidence(case)
        return bool(case.get("flagged")) and (conf if conf is not None else 1.0) >= t

    points = []
    for t in THRESHOLDS:
        recall = sum(flagged(c, t) for c in positives) / len(positives)
        false = sum(flagged(c, t) for c in clean) / len(clean)
        points.append((false, recall))
    svg = _plot([("recall", sorted(set(points)), "#e07b24")], "false-interrupt rate", "recall", dots=True, ident=f"{anchor}-curve")
    return f"<h3>Recall vs false interrupts (confidence threshold 0 → 1)</h3>{svg}"


def _plot(series: list[tuple[str, list[tuple[float, float]], str]], xlabel: str, ylabel: str, *, diagonal: bool = False,
          dots: bool = False, ident: str = "") -> str:
    w, h, m = 360, 240, 40
    xmax = max([1.0] if diagonal else [max((x for _, pts, _ in series for x, _ in pts), default=1.0) or 1.0])
    ymax = 1.0

    def sx(x: float) -> float:
        return m + (w - 2 * m) * x / xmax

    def sy(y: float) -> float:
        return h - m - (h - 2 * m) * y / ymax

    out = [f"<line x1='{m}' y1='{h - m}' x2='{w - m}' y2='{h - m}' stroke='#888'/>",
           f"<line x1='{m}' y1='{m}' x2='{m}' y2='{h - m}' stroke='#888'/>",
           f"<text x='{w / 2}' y='{h - 8}' text-anchor='middle' font-size='11'>{escape(xlabel)} (0 – {xmax:.2f})</text>",
           f"<text x='12' y='{h / 2}' text-anchor='middle' font-size='11' transform='rotate(-90 12 {h / 2})'>{escape(ylabel)} (0 – 1)</text>"]
    if diagonal:
        out.append(f"<line x1='{sx(0)}' y1='{sy(0)}' x2='{sx(1)}' y2='{sy(1)}' stroke='#bbb' stroke-dasharray='4 3'/>")
    for name, pts, colour in series:
        if pts:
            path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
            out.append(f"<polyline fill='none' stroke='{colour}' stroke-width='2' points='{path}'><title>{escape(name)}</title></polyline>")
            if dots:
                out += [f"<circle cx='{sx(x):.1f}' cy='{sy(y):.1f}' r='3' fill='{colour}'><title>{x:.3f}, {y:.3f}</title></circle>" for x, y in pts]
    attr = f" id='{ident}'" if ident else ""
    return (f"<svg{attr} class='plot' role='img' aria-label='{escape(ylabel)} by {escape(xlabel)}' width='{w}' height='{h}' "
            f"viewBox='0 0 {w} {h}' xmlns='http://www.w3.org/2000/svg'>{''.join(out)}</svg>")
