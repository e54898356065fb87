"""``gpuplane diagnose -f html``: one self-contained page with charts and tables.

Self-contained on purpose: the report is mailed, attached to tickets and opened on air-gapped
bastions, so it has inline CSS, charts drawn as HTML boxes sized in percent, no fonts or images to
fetch. A Content-Security-Policy of ``default-src 'none'`` makes the browser refuse any request the
page might try; the one inline script (the findings filter) is allowed by its SHA-256 hash only.
Without JavaScript the page is complete: every finding is listed, info findings folded.

Charts are HTML, not SVG, so labels wrap instead of being clipped and bars take the width of their
card from 700 to 1600 px: GPU allocation by model, by node pool and by namespace (stacked bars),
why GPU pods are Pending (scheduler reasons), free GPUs per node (the fragmentation histogram),
findings by severity. Findings are grouped by severity (error and warning open, info folded) with a
filter box; then the per-node inventory. Element ids and classes (``chart-*``, ``seg seg-<series>``,
``finding``, ``node``, ``findings-<severity>``) are stable: tests and users' scripts select them.

This module only draws: every number comes from :class:`gpuplane.diagnose.report_data.ReportData`
and the diagnose result (docs/architecture.md: reports never compute).
"""

from __future__ import annotations

import base64
import hashlib
from html import escape
from typing import TYPE_CHECKING

from gpuplane.diagnose.evidence import ClusterFinding

if TYPE_CHECKING:
    from gpuplane.diagnose.engine import DiagnoseResult
    from gpuplane.diagnose.inventory import NodeInventory
    from gpuplane.diagnose.report_data import AllocationRow, ReportData
    from gpuplane.lint.finding import Finding

# (series id, legend, colour) for the GPU allocation charts.
ALLOCATION_SERIES = (
    ("allocated", "allocated", "#3b6fd4"),
    ("free", "free", "#4caf7a"),
    ("unhealthy", "unhealthy (capacity > allocatable)", "#e0a030"),
    ("dark", "not advertised", "#d64545"),
)
NAMESPACE_SERIES = (
    ("running", "held by placed pods", "#3b6fd4"),
    ("pending", "asked by Pending pods", "#b07cd6"),
)
SEVERITIES = ("error", "warning", "info")
SEVERITY_COLOURS = {"error": "#d64545", "warning": "#e0a030", "info": "#3b9fd4"}
MAX_PENDING_REASONS = 10
HISTOGRAM_PX = 150  # height of the tallest histogram column
MAX_BIN_LABELS = 16  # wider histograms label every n-th bin (and the last)

CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;background:#f5f6f8}
header{background:#1d2330;color:#fff;padding:18px 24px}
header h1{margin:0 0 4px;font-size:22px;overflow-wrap:anywhere} header p{margin:0;color:#c6ccd8;font-size:14px}
main{padding:18px 24px;max-width:1600px;margin:0 auto}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:18px}
.card{background:#fff;border-radius:8px;padding:10px 16px;min-width:110px;box-shadow:0 1px 2px #0002}
.card b{display:block;font-size:22px} .card span{font-size:12px;color:#5b6373}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,560px),1fr));gap:16px}
figure{background:#fff;margin:0;border-radius:8px;padding:12px 16px;box-shadow:0 1px 2px #0002;min-width:0}
figcaption{font-weight:600;margin-bottom:8px} figure p.note{font-size:12px;color:#5b6373;margin:6px 0 0}
.chart{font-size:12px}
.bar{display:grid;grid-template-columns:minmax(6em,34%) minmax(0,1fr) 4.5em;gap:8px;align-items:center;margin:5px 0}
.bar .label{text-align:right;overflow-wrap:anywhere;line-height:1.25}
.track{display:flex;height:20px;background:#eef0f4;border-radius:3px;overflow:hidden;min-width:0}
.seg{display:block;height:100%;min-width:0}
.bar .total{font-variant-numeric:tabular-nums;white-space:nowrap}
.hist{display:grid;gap:4px;align-items:end}
.bin{display:flex;flex-direction:column;align-items:stretch;justify-content:flex-end;text-align:center;min-width:0}
.bin .count{line-height:16px;font-variant-numeric:tabular-nums;overflow-wrap:anywhere}
.bin .col{display:block;background:#3b6fd4;border-radius:2px 2px 0 0}
.bin .bin-label{line-height:16px;border-top:1px solid #aab0bd;overflow-wrap:anywhere}
.axis-title{font-size:12px;color:#5b6373;margin-top:2px}
section{margin-top:24px} h2{font-size:18px;margin:0 0 8px}
.filter{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:0 0 10px;font-size:13px}
.filter input{font:inherit;padding:5px 8px;border:1px solid #c4c9d4;border-radius:6px;width:min(100%,26em)}
details.sev-group{background:#fff;border-radius:8px;box-shadow:0 1px 2px #0002;margin:0 0 12px;padding:4px 0}
details.sev-group>summary{cursor:pointer;padding:8px 12px;font-weight:600}
details.sev-group>summary .shown{font-weight:400;color:#5b6373;margin-left:6px}
table{border-collapse:collapse;width:100%;background:#fff;font-size:13px;table-layout:fixed}
th,td{text-align:left;vertical-align:top;padding:6px 8px;border-bottom:1px solid #e4e7ec;overflow-wrap:anywhere}
th{background:#eef0f4}
table.findings col.c-rule{width:22%} table.findings col.c-object{width:26%}
table.inventory{box-shadow:0 1px 2px #0002;font-size:12px}
table.inventory col.c-node{width:20%} table.inventory col.c-num{width:8%} table.inventory col.c-layout{width:17%}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.sev{font-weight:700;text-transform:uppercase;font-size:11px;padding:2px 6px;border-radius:4px;color:#fff}
.sev-error{background:#d64545}.sev-warning{background:#e0a030}.sev-info{background:#3b9fd4}
ul.evidence{margin:4px 0 0;padding-left:18px;color:#444b59;font-size:12px}
pre.fix{white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0 0;font-size:12px;background:#f3f5f8;padding:4px 6px;border-radius:4px}
.flag{display:inline-block;background:#fde8e8;color:#9b1c1c;border-radius:4px;padding:1px 5px;margin:1px;font-size:11px;overflow-wrap:anywhere;max-width:100%}
.muted{color:#8a91a0}
p.legend{margin:6px 0 0;font-size:12px;display:flex;flex-wrap:wrap;gap:4px 14px}
p.legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}
"""

# The findings filter: hides rows whose text does not contain the query, opens groups with matches,
# hides groups without. Allowed by its hash in the Content-Security-Policy.
FILTER_JS = (
    "(function(){var box=document.getElementById('finding-filter');if(!box)return;"
    "var out=document.getElementById('filter-count');"
    "box.addEventListener('input',function(){var q=box.value.trim().toLowerCase(),total=0;"
    "document.querySelectorAll('details.sev-group').forEach(function(g){var n=0;"
    "g.querySelectorAll('tr.finding').forEach(function(r){var hit=!q||r.textContent.toLowerCase().indexOf(q)>=0;"
    "r.hidden=!hit;if(hit)n++;});g.querySelector('.shown').textContent=q?n+' shown':'';"
    "g.hidden=!!q&&n===0;if(q&&n)g.open=true;total+=n;});"
    "out.textContent=q?total+' finding(s) match':'';});})();"
)
FILTER_JS_HASH = base64.b64encode(hashlib.sha256(FILTER_JS.encode()).digest()).decode()
CSP = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{FILTER_JS_HASH}'"


def render_html(result: DiagnoseResult) -> str:
    """The whole page as one string."""
    data = result.report_data
    if data is None:
        raise ValueError("render_html needs run_diagnose(..., report_data=True)")
    summary = result.summary()
    state = result.state
    version = result.inventory.kubernetes_version
    title = f"gpuplane diagnose: {state.source or 'cluster'}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
        f"<header><h1>{escape(title)}</h1><p>"
        + escape(f"Kubernetes {version}" if version else "Kubernetes version unknown")
        + f" &middot; {summary['nodes']} nodes &middot; {summary['gpu_nodes']} GPU nodes &middot; "
        f"{summary['pods']} pods &middot; generated by gpuplane</p></header>",
        "<main>",
        _cards(summary),
        '<div class="charts">',
        _allocation_chart("chart-by-model", "GPU allocation by model", data.by_model),
        _allocation_chart("chart-by-pool", "GPU allocation by node pool", data.by_pool),
        _namespace_chart(data),
        _pending_chart(data),
        _fragmentation_chart(data),
        _severity_chart(summary),
        "</div>",
        _findings(result.cluster_findings, result.workload_findings),
        _inventory_table(result.inventory.nodes),
        f"</main><script>{FILTER_JS}</script></body></html>",
    ]
    return "\n".join(parts) + "\n"


# -- summary cards ------------------------------------------------------------------------------


def _cards(summary: dict[str, int]) -> str:
    items = [
        ("GPU nodes", summary["gpu_nodes"]),
        ("GPUs", summary["gpus"]),
        ("Pending pods", summary["pending_pods"]),
        ("errors", summary["error"]),
        ("warnings", summary["warning"]),
        ("info", summary["info"]),
    ]
    cards = "".join(
        f'<div class="card"><b>{value}</b><span>{escape(label)}</span></div>' for label, value in items
    )
    return f'<div class="cards" id="summary">{cards}</div>'


# -- charts -------------------------------------------------------------------------------------

Row = tuple[str, list[int], dict[str, str]]  # (label, value per series, {series id: segment name})


def _legend(series: tuple[tuple[str, str, str], ...]) -> str:
    items = "".join(
        f'<span class="legend legend-{sid}"><i style="background:{colour}"></i>{escape(label)}</span>'
        for sid, label, colour in series
    )
    return f'<p class="legend">{items}</p>'


def _pct(value: int, top: int) -> str:
    return f"{100 * value / top:.2f}%"


def _stacked_bars(
    chart_id: str, title: str, rows: list[Row], series: tuple[tuple[str, str, str], ...], note: str = ""
) -> str:
    """Horizontal stacked bars; the legend of a series whose rows name it differently lists those names."""
    if not rows:
        return _empty_figure(chart_id, title, "nothing to show")
    series = _legend_series(rows, series)
    top = max(sum(values) for _, values, _ in rows) or 1
    out = [f'<div class="chart stacked" role="img" aria-label="{escape(title)}">']
    for label, values, names in rows:
        segs = []
        for (sid, name, colour), value in zip(series, values, strict=True):
            if value <= 0:
                continue
            tip = f"{label}: {value} {names.get(sid, name)}"
            segs.append(
                f'<span class="seg seg-{sid}" style="width:{_pct(value, top)};background:{colour}" '
                f'data-value="{value}" title="{escape(tip)}"></span>'
            )
        out.append(
            f'<div class="bar" data-label="{escape(label)}"><span class="label">{escape(label)}</span>'
            f'<span class="track">{"".join(segs)}</span><span class="total">{sum(values)}</span></div>'
        )
    out.append("</div>")
    caption = f'<p class="note">{escape(note)}</p>' if note else ""
    return (
        f'<figure id="{chart_id}"><figcaption>{escape(title)}</figcaption>{"".join(out)}{_legend(series)}'
        f"{caption}</figure>"
    )


def _legend_series(
    rows: list[Row], series: tuple[tuple[str, str, str], ...]
) -> tuple[tuple[str, str, str], ...]:
    out = []
    for i, (sid, name, colour) in enumerate(series):
        named = sorted({names[sid] for _, values, names in rows if sid in names and values[i] > 0})
        heads = {n.split(" (", 1)[0] for n in named}
        if len(named) > 1 and len(heads) == 1 and all(n.endswith(")") and " (" in n for n in named):
            # "not advertised (a)", "not advertised (b)" -> "not advertised (a; b)"
            inner = sorted({part for n in named for part in n.split(" (", 1)[1][:-1].split("; ")})
            named = [f"{heads.pop()} ({'; '.join(inner)})"]
        out.append((sid, " / ".join(named) if named else name, colour))
    return tuple(out)


def _bars(chart_id: str, title: str, rows: list[tuple[str, int, str]], note: str = "") -> str:
    """Single-series horizontal bars: (label, value, colour). Labels wrap, never clipped."""
    if not rows:
        return _empty_figure(chart_id, title, note or "nothing to show")
    top = max(value for _, value, _ in rows) or 1
    out = [f'<div class="chart bars" role="img" aria-label="{escape(title)}">']
    for label, value, colour in rows:
        seg = (
            f'<span class="seg" style="width:{_pct(value, top)};background:{colour}" data-value="{value}" '
            f'title="{escape(label)}: {value}"></span>'
            if value
            else ""
        )
        out.append(
            f'<div class="bar" data-label="{escape(label)}"><span class="label">{escape(label)}</span>'
            f'<span class="track">{seg}</span><span class="total">{value}</span></div>'
        )
    out.append("</div>")
    caption = f'<p class="note">{escape(note)}</p>' if note else ""
    return f'<figure id="{chart_id}"><figcaption>{escape(title)}</figcaption>{"".join(out)}{caption}</figure>'


def _histogram(chart_id: str, title: str, bins: list[tuple[str, int]], note: str) -> str:
    """Vertical columns; the count sits above each column inside the chart's own height, so the
    tallest column's label is never cut."""
    if not bins:
        return _empty_figure(chart_id, title, note)
    top = max(count for _, count in bins) or 1
    every = -(-len(bins) // MAX_BIN_LABELS)
    out = [
        f'<div class="chart hist" role="img" aria-label="{escape(title)}" '
        f'style="grid-template-columns:repeat({len(bins)},minmax(0,1fr))">'
    ]
    for i, (label, count) in enumerate(bins):
        shown = label if i % every == 0 or i == len(bins) - 1 else ""
        height = round(HISTOGRAM_PX * count / top)
        out.append(
            f'<div class="bin" data-label="{escape(label)}" title="{count} node(s) with {escape(label)} free">'
            f'<span class="count">{count if count or every == 1 else ""}</span>'
            f'<span class="col seg" style="height:{height}px" data-value="{count}"></span>'
            f'<span class="bin-label">{escape(shown)}</span></div>'
        )
    out.append('</div><div class="axis-title">free GPU units per node &#8594;</div>')
    return (
        f'<figure id="{chart_id}"><figcaption>{escape(title)}</figcaption>{"".join(out)}'
        f'<p class="note">{escape(note)}</p></figure>'
    )


def _empty_figure(chart_id: str, title: str, note: str) -> str:
    return (
        f'<figure id="{chart_id}"><figcaption>{escape(title)}</figcaption>'
        f'<div class="chart empty"><p class="note">{escape(note)}</p></div></figure>'
    )


def _dark_label(causes: list[str]) -> str:
    return f"not advertised ({'; '.join(causes)})" if causes else "not advertised"


def _allocation_chart(chart_id: str, title: str, data: list[AllocationRow]) -> str:
    rows: list[Row] = [
        (r.label, [r.allocated, r.free, r.unhealthy, r.dark], {"dark": _dark_label(r.dark_causes)})
        for r in data
    ]
    return _stacked_bars(
        chart_id,
        title,
        rows,
        ALLOCATION_SERIES,
        "Schedulable units as advertised: whole GPUs, MIG devices, time-sliced replicas.",
    )


def _namespace_chart(data: ReportData) -> str:
    rows: list[Row] = [(name, [running, pending], {}) for name, running, pending in data.namespaces]
    return _stacked_bars(
        "chart-by-namespace",
        "GPU allocation by namespace",
        rows,
        NAMESPACE_SERIES,
        "GPU units held by placed pods and asked for by Pending pods.",
    )


def _pending_chart(data: ReportData) -> str:
    ordered = sorted(data.pending_reasons.items(), key=lambda item: (-item[1], item[0]))
    rows = [(reason, count, "#b07cd6") for reason, count in ordered[:MAX_PENDING_REASONS]]
    note = "Pending GPU pods per scheduler reason (a pod counts once per distinct reason)."
    if len(ordered) > MAX_PENDING_REASONS:
        note += f" The {MAX_PENDING_REASONS} most frequent of {len(ordered)} reasons."
    return _bars(
        "chart-pending-reasons", "Why GPU pods are Pending", rows, note if rows else "No Pending GPU pods."
    )


def _fragmentation_chart(data: ReportData) -> str:
    frag = data.fragmentation
    if not frag.bins:
        return _empty_figure("chart-fragmentation", "Free GPUs per node", "No schedulable GPU node.")
    note = f"{frag.free_units} free units on {frag.schedulable_nodes} schedulable GPU nodes"
    if frag.largest_pending_request:
        note += (
            f"; the largest Pending pod asks for {frag.largest_pending_request} on one node: "
            f"{frag.nodes_hosting_largest} node(s) can host it"
        )
    return _histogram("chart-fragmentation", "Free GPUs per node (fragmentation)", frag.bins, note + ".")


def _severity_chart(summary: dict[str, int]) -> str:
    rows = [(sev, summary[sev], SEVERITY_COLOURS[sev]) for sev in SEVERITIES]
    return _bars("chart-severity", "Findings by severity", rows)


# -- findings -----------------------------------------------------------------------------------


def _finding_row(finding: Finding, scope: str) -> str:
    obj = finding.object
    where = f"{obj.namespace}/" if obj.namespace else ""
    location = ""
    if obj.path and finding.line > 0:
        location = f'<br><span class="muted">{escape(obj.path)}:{finding.line}</span>'
    elif obj.path and not isinstance(finding, ClusterFinding):
        location = f'<br><span class="muted">{escape(obj.path)}</span>'
    evidence = ""
    if isinstance(finding, ClusterFinding) and finding.evidence:
        items = "".join(f"<li>{escape(item.text())}</li>" for item in finding.evidence)
        evidence = f'<ul class="evidence">{items}</ul>'
    return (
        f'<tr class="finding sev-row-{escape(finding.severity)}" data-rule="{escape(finding.rule)}" '
        f'data-scope="{scope}"><td>{escape(finding.rule)}<br><span class="muted">{scope}</span></td>'
        f"<td>{escape(obj.kind)} {escape(where + obj.name)}{location}</td>"
        f'<td>{escape(finding.message)}<pre class="fix">fix: {escape(finding.fix)}</pre>{evidence}</td></tr>'
    )


def _findings(cluster: list[Finding], workload: list[Finding]) -> str:
    """Findings grouped by severity: errors and warnings open, info folded."""
    total = len(cluster) + len(workload)
    head = f'<section id="findings"><h2>Findings ({total})</h2>'
    if not total:
        return head + '<p class="muted">None.</p></section>'
    parts = [
        head,
        '<p class="filter"><label for="finding-filter">Filter</label>'
        '<input type="search" id="finding-filter" placeholder="rule, object, namespace or text" '
        'autocomplete="off"><span id="filter-count" class="muted"></span></p>',
    ]
    for sev in SEVERITIES:
        rows = [_finding_row(f, "cluster") for f in cluster if f.severity == sev]
        rows += [_finding_row(f, "workload") for f in workload if f.severity == sev]
        if not rows:
            continue
        opened = " open" if sev != "info" else ""
        parts.append(
            f'<details class="sev-group" id="findings-{sev}"{opened}><summary>'
            f'<span class="sev sev-{sev}">{sev}</span> {len(rows)} finding{"s" if len(rows) != 1 else ""}'
            '<span class="shown"></span></summary>'
            '<table class="findings"><colgroup><col class="c-rule"><col class="c-object"><col></colgroup>'
            "<thead><tr><th>rule</th><th>object</th><th>finding</th></tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table></details>"
        )
    parts.append("</section>")
    return "".join(parts)


def _inventory_table(nodes: list[NodeInventory]) -> str:
    head = '<section id="inventory"><h2>GPU inventory</h2>'
    if not nodes:
        return head + '<p class="muted">No GPU nodes.</p></section>'
    rows = [
        '<table class="inventory"><colgroup><col class="c-node"><col><col><col class="c-num"><col class="c-num">'
        '<col class="c-num"><col class="c-num"><col class="c-layout"><col></colgroup>'
        "<thead><tr><th>node</th><th>pool</th><th>model</th><th>GPUs</th><th>allocatable</th><th>allocated</th>"
        "<th>free</th><th>layout</th><th>flags</th></tr></thead><tbody>"
    ]
    for node in nodes:
        units = node.units()
        layout = []
        if node.mig is not None:
            devices = ", ".join(f"{count}x {profile}" for profile, count in node.mig.devices.items())
            layout.append(f"MIG {node.mig.strategy or ''} {devices}".strip())
        if node.sharing is not None:
            layout.append(f"{node.sharing.strategy} x{node.sharing.replicas}")
        flags = "".join(
            f'<span class="flag" title="{escape(flag.message)}">{escape(flag.flag)}</span>'
            for flag in node.flags
        )
        rows.append(
            f'<tr class="node" data-node="{escape(node.name)}"><td>{escape(node.name)}</td><td>{escape(node.pool)}</td>'
            f'<td>{escape(node.model_key)}</td><td class="num">{node.gpus}</td>'
            f'<td class="num">{units.allocatable}</td><td class="num">{units.allocated}</td>'
            f'<td class="num">{units.free}</td><td>{escape("; ".join(layout)) or "-"}</td><td>{flags or "-"}</td></tr>'
        )
    rows.append("</tbody></table></section>")
    return head + "".join(rows)
