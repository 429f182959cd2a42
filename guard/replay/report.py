"""``report.html`` of a replay: one self-contained page (inline CSS and SVG, no script, nothing fetched).

What a reviewer of a policy change reads: the headline figures, the old × new action matrix whose
changed cells link to their examples, the changes per category (a bar chart) and per tool, and the
lines the replay passed over. Every value from the log is escaped: a log is hostile input, and a
tool name or an argument must never become markup.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

ACTIONS = ("allow", "warn", "repair", "retry", "ask_human", "block")

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;max-width:1100px;color:#1d2430;padding:0 1rem}
h1{font-size:1.5rem;margin:0 0 .3rem}h2{font-size:1.15rem;margin:2rem 0 .6rem;border-bottom:1px solid #d6dbe3;padding-bottom:.2rem}
.meta{color:#5b6575;font-size:.9rem}.cards{display:flex;flex-wrap:wrap;gap:.8rem;margin:1rem 0}
.card{border:1px solid #d6dbe3;border-radius:6px;padding:.6rem .9rem;min-width:150px}
.card b{display:block;font-size:1.4rem}.card.bad b{color:#b3261e}.card.good b{color:#1e7b34}
table{border-collapse:collapse;margin:.4rem 0}th,td{border:1px solid #d6dbe3;padding:.3rem .55rem;text-align:right}
th{background:#f3f5f8}td.name,th.name{text-align:left}td.same{color:#5b6575;background:#fafbfc}
td.changed{background:#fff3e0;font-weight:600}td.changed a{color:#8a3b00}
section.change{border:1px solid #d6dbe3;border-radius:6px;padding:.4rem .9rem;margin:.8rem 0}
section.change:target{outline:3px solid #f0a030}
pre{background:#f6f8fa;padding:.5rem;overflow:auto;max-height:16rem;white-space:pre-wrap;word-break:break-word}
details{margin:.4rem 0}summary{cursor:pointer}.said{color:#3b4657;font-style:italic}
"""


def render(report: dict[str, Any]) -> str:
    """The page for a ``diff.json`` (``Diff.report``)."""
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>guard replay: {escape(_policy_name(report.get('policy')))}</title><style>{_CSS}</style></head><body>",
        _header(report),
        _cards(report),
        _confusion(report),
        _categories(report),
        _tools(report),
        _examples(report),
        _skipped(report),
        "</body></html>",
    ]
    return "\n".join(parts)


def _policy_name(policy: Any) -> str:
    if isinstance(policy, dict):
        return f"{policy.get('name')} ({str(policy.get('sha256', ''))[:12]})"
    return str(policy)


def _header(r: dict[str, Any]) -> str:
    logs = ", ".join(escape(str(x)) for x in r.get("logs", []))
    return (f"<header id='summary'><h1>Replay of {r.get('decisions', 0):,} decisions</h1>"
            f"<p class='meta'>new policy <b>{escape(_policy_name(r.get('policy')))}</b> against "
            f"<b>{escape(_policy_name(r.get('baseline')))}</b> decisions; logs: {logs}</p></header>")


def _pct(n: int, total: int) -> str:
    return f"{n / total:.2%}" if total else "0%"


def _cards(r: dict[str, Any]) -> str:
    n = r.get("decisions", 0)
    cards = [
        ("decisions", f"{n:,}", ""),
        ("changed", f"{r.get('changed', 0):,} ({_pct(r.get('changed', 0), n)})", ""),
        ("newly interrupted", f"{r.get('newly_interrupted', 0):,} ({_pct(r.get('newly_interrupted', 0), n)})",
         "bad" if r.get("newly_interrupted") else ""),
        ("no longer interrupted", f"{r.get('no_longer_interrupted', 0):,} ({_pct(r.get('no_longer_interrupted', 0), n)})",
         "good" if r.get("no_longer_interrupted") else ""),
        ("categories changed", f"{r.get('categories_changed', 0):,}", ""),
        ("lines skipped", f"{sum(r.get('skipped', {}).values()):,}", ""),
    ]
    body = "".join(f"<div class='card {cls}'><b>{escape(v)}</b>{escape(k)}</div>" for k, v, cls in cards)
    return f"<div class='cards' id='headline'>{body}</div>"


def _anchor(old: str, new: str) -> str:
    return "ex-" + "".join(c if c.isalnum() else "-" for c in f"{old}-to-{new}")


def _order(names: set[str]) -> list[str]:
    return [a for a in ACTIONS if a in names] + sorted(names - set(ACTIONS))


def _confusion(r: dict[str, Any]) -> str:
    confusion: dict[str, dict[str, int]] = r.get("confusion", {})
    examples = r.get("examples", {})
    olds = _order(set(confusion))
    news = _order({n for row in confusion.values() for n in row})
    head = "".join(f"<th>{escape(a)}</th>" for a in news)
    rows = []
    for old in olds:
        cells = []
        for new in news:
            count = confusion.get(old, {}).get(new, 0)
            if old == new or not count:
                cells.append(f"<td class='same'>{count:,}</td>" if count else "<td></td>")
            elif f"{old}->{new}" in examples:
                cells.append(f"<td class='changed'><a href='#{_anchor(old, new)}'>{count:,}</a></td>")
            else:
                cells.append(f"<td class='changed'>{count:,}</td>")
        rows.append(f"<tr><th class='name'>{escape(old)}</th>{''.join(cells)}</tr>")
    return ("<h2>Old action × new action</h2><p class='meta'>Rows: the old decision; columns: the new one. "
            "A changed cell links to its examples.</p>"
            f"<table id='confusion'><tr><th class='name'>old \\ new</th>{head}</tr>{''.join(rows)}</table>")


def _table(title: str, anchor: str, rows: dict[str, dict[str, int]], limit: int = 50) -> str:
    ranked = sorted(rows.items(), key=lambda kv: (-kv[1].get("changed", 0), kv[0]))[:limit]
    body = "".join(
        f"<tr><td class='name'>{escape(k)}</td><td>{v.get('decisions', 0):,}</td><td>{v.get('changed', 0):,}</td>"
        f"<td>{v.get('newly_interrupted', 0):,}</td><td>{v.get('no_longer_interrupted', 0):,}</td></tr>"
        for k, v in ranked
    )
    more = f"<p class='meta'>{len(rows) - limit} more in diff.json</p>" if len(rows) > limit else ""
    return (f"<h2>{escape(title)}</h2><table id='{anchor}'><tr><th class='name'>{escape(title.split()[-1])}</th><th>decisions</th>"
            f"<th>changed</th><th>newly interrupted</th><th>no longer interrupted</th></tr>{body}</table>{more}")


def _categories(r: dict[str, Any]) -> str:
    per = r.get("per_category", {})
    changed = sorted(((k, v.get("changed", 0)) for k, v in per.items() if v.get("changed")), key=lambda kv: (-kv[1], kv[0]))[:20]
    chart = ""
    if changed:
        top = max(c for _, c in changed)
        bar_h, label_w, width = 20, 190, 520
        bars = []
        for i, (name, count) in enumerate(changed):
            w = max(1.0, (width - label_w - 60) * count / top)
            y = i * (bar_h + 6)
            bars.append(
                f"<text x='{label_w - 6}' y='{y + 14}' text-anchor='end' font-size='12'>{escape(name)}</text>"
                f"<rect x='{label_w}' y='{y}' width='{w:.1f}' height='{bar_h}' fill='#e07b24'><title>{escape(name)}: {count}</title></rect>"
                f"<text x='{label_w + w + 4:.1f}' y='{y + 14}' font-size='12'>{count:,}</text>"
            )
        height = len(changed) * (bar_h + 6)
        chart = (f"<svg id='changes-by-category' role='img' aria-label='changed decisions per category' width='{width}' "
                 f"height='{height}' viewBox='0 0 {width} {height}' xmlns='http://www.w3.org/2000/svg'>{''.join(bars)}</svg>")
    return _table("Per category", "per-category", per) + chart


def _tools(r: dict[str, Any]) -> str:
    return _table("Per tool", "per-tool", r.get("per_tool", {}))


def _examples(r: dict[str, Any]) -> str:
    sections = []
    for change, shown in r.get("examples", {}).items():
        old, _, new = change.partition("->")
        items = []
        for e in shown:
            said = e.get("new", {}).get("said")
            items.append(
                f"<details><summary>{escape(str(e.get('tool')))} · thread {escape(str(e.get('thread_id')))} · "
                f"{escape(', '.join(e.get('old', {}).get('categories', [])) or 'no finding')} → "
                f"{escape(', '.join(e.get('new', {}).get('categories', [])) or 'no finding')}</summary>"
                + (f"<p class='said'>{escape(said)}</p>" if said else "")
                + f"<pre>{escape(json.dumps(e, indent=2, ensure_ascii=False, default=str))}</pre></details>"
            )
        count = r.get("confusion", {}).get(old, {}).get(new, 0)
        sections.append(f"<section class='change' id='{_anchor(old, new)}'><h3>{escape(old)} → {escape(new)} "
                        f"({count:,})</h3>{''.join(items)}</section>")
    if not sections:
        return "<h2>Examples</h2><p id='examples'>No decision changed.</p>"
    return "<h2>Examples</h2><div id='examples'>" + "".join(sections) + "</div>"


def _skipped(r: dict[str, Any]) -> str:
    skipped = r.get("skipped", {})
    if not skipped:
        return "<h2>Lines passed over</h2><p id='skipped'>None.</p>"
    rows = "".join(f"<tr><td class='name'>{escape(k)}</td><td>{v:,}</td></tr>" for k, v in skipped.items())
    return f"<h2>Lines passed over</h2><table id='skipped'><tr><th class='name'>why</th><th>lines</th></tr>{rows}</table>"
