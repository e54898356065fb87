"""``gpuplane usage -f html``: one self-contained page (no script, no network).

A utilization heatmap per node x hour, the top idle workloads, savings by team, and every
finding with its change. Like the diagnose report it reads the engine's result and computes
nothing but colours; it lives in its own module so the diagnose page can link or embed it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuplane.usage.engine import UsageResult

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem;color:#1d2330;max-width:1400px}
h1{font-size:1.5rem;margin:0 0 .25rem}h2{font-size:1.15rem;margin:2rem 0 .5rem}
.muted{color:#667085}.cards{display:flex;gap:1rem;flex-wrap:wrap;margin:1rem 0}
.card{border:1px solid #e4e7ec;border-radius:8px;padding:.75rem 1rem;min-width:10rem}
.card b{display:block;font-size:1.3rem}
table{border-collapse:collapse;margin:.5rem 0}th,td{padding:.3rem .6rem;border-bottom:1px solid #eaecf0;text-align:right}
th:first-child,td:first-child{text-align:left}
.heat td{padding:0;height:16px;border:0}.heat th{font-weight:normal;font-size:12px;padding-right:.5rem;white-space:nowrap}
.finding{border-left:4px solid #f79009;padding:.4rem .8rem;margin:.6rem 0;background:#fffaf0}
.finding code{background:#f2f4f7;padding:0 .2rem}.save{color:#067647}
.legend span{display:inline-block;width:18px;height:12px;vertical-align:middle}
.scroll{overflow-x:auto;max-width:100%}
"""


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def _colour(value: float | None) -> str:
    """Activity 0..1 -> a colour from grey-blue (idle) to deep green (busy); white for no data."""
    if value is None:
        return "#f2f4f7"
    v = max(0.0, min(1.0, value))
    if v < 0.05:
        return "#d0d5dd"
    r = int(254 - v * 230)
    g = int(240 - v * 120)
    b = int(199 - v * 160)
    return f"#{r:02x}{g:02x}{b:02x}"


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:,.0f}"


def _heatmap(doc: dict[str, Any]) -> str:
    heat = doc.get("heatmap")
    if not heat or not heat["nodes"]:
        return "<p class=muted>No device series.</p>"
    rows = []
    hours = heat["bucket_s"] / 3600
    columns = max((len(v) for v in heat["values"]), default=1)
    cell = max(5, min(28, 1000 // max(columns, 1)))
    for node, values in zip(heat["nodes"], heat["values"]):
        cells = "".join(
            f'<td style="background:{_colour(v)};width:{cell}px;min-width:{cell}px" title="{escape(node)} '
            f"{_when(heat['start'] + i * heat['bucket_s'])}: "
            f'{"no data" if v is None else f"{v * 100:.0f}%"}"></td>'
            for i, v in enumerate(values)
        )
        rows.append(f"<tr><th>{escape(node)}</th>{cells}</tr>")
    legend = "".join(f'<span style="background:{_colour(v)}"></span>' for v in (0, 0.1, 0.3, 0.5, 0.7, 0.9))
    return (
        f"<p class=muted>Mean engine activity of each node's GPUs per {hours:g} h, from "
        f"{_when(heat['start'])}. <span class=legend>idle {legend} busy</span></p>"
        f'<div class="scroll"><table class="heat">{"".join(rows)}</table></div>'
    )


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def render_usage_html(result: UsageResult) -> str:
    doc = result.to_json()
    s = doc["summary"]
    w = doc["window"]
    grid = result.series.grid
    cards = [
        ("GPU-hours allocated", f"{s['allocated_gpu_hours']:,.0f}"),
        ("active", f"{(s['active_share'] or 0) * 100:.0f}%"),
        ("idle GPU-hours", f"{s['idle_gpu_hours']:,.0f}"),
        ("saving (window)", f"{s['saving_gpu_hours']:,.0f} GPU-h"),
        ("saving / month", _usd(s["saving_usd_per_month"]) + " (estimate)"),
    ]
    idle = sorted(doc["workloads"], key=lambda x: -x["idle_gpu_hours"])[:10]
    idle_rows = [
        [
            escape(f"{x['object']['kind']} {x['object']['namespace']}/{x['object']['name']}"),
            escape(x["category"]),
            f"{x['gpus']:g}",
            f"{x['idle_gpu_hours']:,.1f}",
            f"{x['longest_idle_hours']:,.1f}",
            "-" if x["activity_p95"] is None else f"{x['activity_p95'] * 100:.0f}%",
        ]
        for x in idle
        if x["idle_gpu_hours"] > 0
    ]
    team_rows = [
        [
            escape(n["namespace"]),
            f"{n['allocated_gpu_hours']:,.1f}",
            "-" if n["active_share"] is None else f"{n['active_share'] * 100:.0f}%",
            f"{n['saving_gpu_hours']:,.1f}",
            _usd(n["saving_usd"]),
        ]
        for n in sorted(doc["namespaces"], key=lambda n: -n["saving_gpu_hours"])
    ]
    findings = []
    for f in doc["findings"]:
        sv = f["saving"]
        money = f" · ~{_usd(sv['usd'])} (~{_usd(sv['usd_per_month'])}/month)" if sv["usd"] is not None else ""
        findings.append(
            f'<div class="finding"><b>{escape(f["rule"])}</b> {escape(f["message"])}<br>'
            f"change: {escape(f['fix'])}<br>"
            f'<span class="save">saving: {sv["gpu_hours"]:,.1f} GPU-hours{money} (estimate: '
            f"{escape(sv['basis'])})</span></div>"
        )
    notes = "".join(f"<li>{escape(n)}</li>" for n in doc["notes"])
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width,initial-scale=1'>"
        f"<title>gpuplane usage</title><style>{STYLE}</style></head><body>"
        f"<h1>GPU usage</h1><p class=muted>{_when(grid.start - grid.step)} → {_when(grid.end)} "
        f"({w['hours']:g} h, step {grid.step} s) · metrics {escape(str(w['source']))}"
        + (f" · cluster {escape(str(w['cluster']))}" if w["cluster"] else "")
        + f" · activity {escape(doc['signals']['activity'])}</p>"
        '<div class="cards">'
        + "".join(f'<div class="card">{escape(k)}<b>{escape(v)}</b></div>' for k, v in cards)
        + "</div><h2>Utilization per node and hour</h2>"
        + _heatmap(doc)
        + "<h2>Top idle workloads</h2>"
        + (
            _table(["workload", "kind", "GPUs", "idle GPU-h", "longest idle h", "p95"], idle_rows)
            if idle_rows
            else "<p class=muted>None.</p>"
        )
        + "<h2>Savings by team</h2>"
        + _table(["namespace", "allocated GPU-h", "active", "saving GPU-h", "saving $"], team_rows)
        + f"<h2>Findings ({len(findings)})</h2>"
        + ("".join(findings) or "<p class=muted>None.</p>")
        + "<p class=muted>Money figures are estimates: on-demand list prices per GPU-hour from "
        "gpuplane's price table, no discounts.</p>"
        + (f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "")
        + "</body></html>\n"
    )
