"""The HTML report rendered by a real headless Chromium (Debian ``chromium``; CI installs it).

The tests load the page from disk with networking disabled, check that the browser built the
charts and the finding rows, measure the layout at 700 and 1400 px (no element leaves its card, no
label is cut, no horizontal scrolling, charts use their card's width), drive the findings filter,
and take screenshots at both widths.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from gpuplane.diagnose.engine import run_diagnose
from gpuplane.report.html import CSP, FILTER_JS, render_html
from gpuplane.sources.cluster import load_cluster_state

ROOT = Path(__file__).resolve().parent.parent.parent
DEMO = ROOT / "examples" / "clusters" / "demo.yaml"
CHARTS = (
    "chart-by-model",
    "chart-by-pool",
    "chart-by-namespace",
    "chart-pending-reasons",
    "chart-fragmentation",
    "chart-severity",
)


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run does it)")
    return found


def _browser(binary: str, *args: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    state, errors = load_cluster_state(str(DEMO))
    assert errors == []
    result = run_diagnose(state, report_data=True)
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(render_html(result), encoding="utf-8")
    return path, len(result.findings)


def test_chromium_renders_charts_and_findings(report: tuple[Path, int]) -> None:
    binary = _chromium()
    path, findings = report
    done = _browser(binary, "--dump-dom", path.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    for chart in CHARTS:
        match = re.search(rf'<figure id="{chart}">(.*?)</figure>', dom, re.S)
        assert match is not None, chart
        assert 'class="chart ' in match.group(1), chart
    # allocated segments: A100-40GB, H100-80GB, L4 models + a100-40gb, a100-40gb-mig, h100-80gb, l4-shared pools
    assert len(re.findall(r'<span class="seg seg-allocated"', dom)) == 7
    # dark: GPUs not advertised: the L40S node (by model and by pool) and the failed MIG node (A100 model
    # and a100-40gb-mig pool)
    assert len(re.findall(r'<span class="seg seg-dark"', dom)) == 4
    assert len(re.findall(r'<tr class="finding ', dom)) == findings
    assert 'data-rule="gpu-node-not-advertising"' in dom
    assert 'data-rule="pending-gpu-pod"' in dom
    assert len(re.findall(r'<tr class="node" ', dom)) == 12


@pytest.mark.parametrize("width", [700, 1400])
def test_chromium_screenshot(report: tuple[Path, int], tmp_path: Path, width: int) -> None:
    binary = _chromium()
    path, _ = report
    shot = tmp_path / f"report-{width}.png"
    done = _browser(
        binary, "--hide-scrollbars", f"--window-size={width},2400", f"--screenshot={shot}", path.as_uri()
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.is_file()
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(data[16:20], "big") == width  # IHDR width: the page was laid out at this width
    assert len(data) > 50_000  # a page of charts and tables, not a blank canvas


# Runs after the page's own script: measures the layout the browser computed, then drives the
# filter box, and writes what it found into <pre id="layout-report"> for --dump-dom.
LAYOUT_PROBE = """
(function(){
var out={offenders:[],clipped:[],narrowTracks:[],pageOverflow:0,filter:{}};
var vw=document.documentElement.clientWidth;
out.pageOverflow=document.documentElement.scrollWidth-vw;
function name(el){return el.tagName.toLowerCase()+(el.className&&el.className.baseVal===undefined?'.'+String(el.className).split(' ').join('.'):'')+' '+(el.textContent||'').trim().slice(0,40);}
document.querySelectorAll('figure, .card, details.sev-group, #inventory table').forEach(function(card){
  var c=card.getBoundingClientRect();
  card.querySelectorAll('*').forEach(function(el){
    var r=el.getBoundingClientRect();
    if(!r.width&&!r.height)return;
    if(r.right>c.right+1||r.left<c.left-1)out.offenders.push(name(el)+' right='+r.right+' card='+c.right);
  });
});
document.querySelectorAll('.label, .bin-label, .count, .total, figcaption, td, th, .legend, .card span, .card b').forEach(function(el){
  if(el.getBoundingClientRect().width&&el.scrollWidth>el.clientWidth+1)out.clipped.push(name(el));
});
document.querySelectorAll('figure .track').forEach(function(t){
  var f=t.closest('figure').getBoundingClientRect().width, w=t.getBoundingClientRect().width;
  if(w<0.45*f)out.narrowTracks.push(t.closest('figure').id+' '+Math.round(w)+'/'+Math.round(f));
});
var infoOpen=document.getElementById('findings-info').open;
var box=document.getElementById('finding-filter');
box.value='MIG-CONFIG-FAILED';
box.dispatchEvent(new Event('input'));
function visible(){return Array.prototype.filter.call(document.querySelectorAll('tr.finding'),function(r){return r.offsetParent!==null;}).length;}
out.filter={infoOpenAtStart:infoOpen,shown:visible(),count:document.getElementById('filter-count').textContent,
  hiddenGroups:Array.prototype.filter.call(document.querySelectorAll('details.sev-group'),function(g){return g.hidden;}).map(function(g){return g.id;})};
box.value='';box.dispatchEvent(new Event('input'));
out.filter.shownAfterClear=Array.prototype.filter.call(document.querySelectorAll('tr.finding'),function(r){return !r.hidden;}).length;
var pre=document.createElement('pre');pre.id='layout-report';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);
})();
"""


def _probe_page(path: Path, tmp_path: Path) -> Path:
    """The report with the probe appended; the CSP allows the report's filter script and the probe,
    each by its hash, so a wrong hash for the page's own script makes the filter checks fail."""
    probe_hash = base64.b64encode(hashlib.sha256(LAYOUT_PROBE.encode()).digest()).decode()
    page = path.read_text(encoding="utf-8")
    assert f"<script>{FILTER_JS}</script>" in page
    page = page.replace(CSP, CSP + f" 'sha256-{probe_hash}'")
    page = page.replace("</body>", f"<script>{LAYOUT_PROBE}</script></body>")
    probed = tmp_path / "probed.html"
    probed.write_text(page, encoding="utf-8")
    return probed


@pytest.mark.parametrize("width", [700, 1400])
def test_layout_fits_every_card_and_the_filter_works(
    report: tuple[Path, int], tmp_path: Path, width: int
) -> None:
    binary = _chromium()
    path, findings = report
    done = _browser(
        binary,
        "--hide-scrollbars",
        f"--window-size={width},2400",
        "--dump-dom",
        _probe_page(path, tmp_path).as_uri(),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    match = re.search(r'<pre id="layout-report">(.*?)</pre>', done.stdout, re.S)
    assert match is not None, done.stdout[-2000:]
    found = json.loads(match.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    assert found["pageOverflow"] <= 0
    assert found["offenders"] == []
    assert found["clipped"] == []
    assert found["narrowTracks"] == []
    # info findings start folded; the filter is case-insensitive, opens matching groups, hides the others
    assert found["filter"]["infoOpenAtStart"] is False
    assert found["filter"]["shown"] == 1
    assert found["filter"]["count"] == "1 finding(s) match"
    assert found["filter"]["hiddenGroups"] == ["findings-warning", "findings-info"]
    assert found["filter"]["shownAfterClear"] == findings
