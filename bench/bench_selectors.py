#!/usr/bin/env python3
"""Benchmark the selector questions of ``why-pending`` and ``diagnose``: topology spread, pod
(anti-)affinity, preemption's PDBs, against ``json.load`` of the same file (issue 14, item 1).

``gen_cluster.py`` writes the cluster (nodes, running pods, a few Pending ones); this script
appends ``--spread`` more Pending pods whose constraints are pod-selector questions, in the
shares a real cluster shows them: zone and hostname ``topologySpreadConstraints``
(``DoNotSchedule`` and ``ScheduleAnyway``, selecting the running pods of one app), required pod
affinity and anti-affinity by zone and hostname, and a PodDisruptionBudget per app so
preemption has budgets to check. Each measurement runs in a fresh process:

- ``json.load`` of the file (the baseline);
- the why-pending engine (load + ``Scheduler`` + explain every Pending pod), explain time apart,
  and the work the cluster's pod index did (pods visited by selector queries);
- ``gpuplane diagnose --cluster FILE -f json`` end to end.

Usage::

    .venv/bin/python bench/bench_selectors.py --nodes 1000 --pods 30000 --spread 300
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"

sys.path.insert(0, str(HERE))
# The baseline and engine child scripts are bench_why_pending's, so both benches measure alike.
from bench_why_pending import ENGINE, JSON_LOAD, child  # noqa: E402

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def pending_pod(i: int, app: str, namespace: str) -> dict[str, Any]:
    """A CPU pod of ``app`` whose constraint (chosen by ``i``) selects the running pods of ``app``."""
    selector = {"matchLabels": {"app.kubernetes.io/name": app}}
    spec: dict[str, Any] = {
        "containers": [
            {"name": "main", "image": "registry.example/app:1", "resources": {"requests": {"cpu": "500m"}}}
        ],
        "tolerations": [],
    }
    variant = i % 8
    if variant in (0, 1, 2):  # zone spread, hard
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": selector,
            }
        ]
    elif variant == 3:  # zone + hostname, hostname soft
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": selector,
            },
            {
                "maxSkew": 2,
                "topologyKey": HOST,
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": selector,
            },
        ]
    elif variant == 4:  # hostname spread, hard, with matchExpressions
        expr = {
            "matchExpressions": [
                {"key": "app.kubernetes.io/name", "operator": "In", "values": [app]},
                {"key": "pod-template-hash", "operator": "Exists"},
            ]
        }
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": expr}
        ]
    elif variant == 5:  # required pod affinity to the app's zone
        spec["affinity"] = {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": selector, "topologyKey": ZONE}
                ]
            }
        }
    elif variant == 6:  # required anti-affinity per host
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": selector, "topologyKey": HOST}
                ]
            }
        }
    else:  # high priority: preemption runs and checks the PDBs
        spec["priority"] = 1000000
        spec["containers"][0]["resources"]["requests"] = {"cpu": "60", "memory": "200Gi"}
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": selector,
            }
        ]
    # Half ask for more CPU than any node has, so every filter and the preemption dry run's
    # explanation runs as for a stuck pod; the other half reach the spread / affinity filters on
    # every node that has room.
    if variant != 7 and i % 2:
        spec["containers"][0]["resources"]["requests"] = {"cpu": "200", "memory": "1Gi"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"spread-{i}",
            "namespace": namespace,
            "uid": f"00000000-0000-4000-8000-{i:012d}",
            "labels": {"app.kubernetes.io/name": app, "pod-template-hash": "abc"},
        },
        "spec": spec,
        "status": {"phase": "Pending"},
    }


def ensure_snapshot(nodes: int, pods: int, spread: int, seed: int) -> Path:
    OUT.mkdir(exist_ok=True)
    path = OUT / f"selectors-{nodes}x{pods}-s{spread}-seed{seed}.json"
    if path.exists():
        return path
    base = OUT / f"cluster-{nodes}x{pods}-p20-s{seed}.json"
    if not base.exists():
        subprocess.run(
            [
                *(sys.executable, str(HERE / "gen_cluster.py"), "--nodes", str(nodes), "--pods", str(pods)),
                *("--pending", "20", "--seed", str(seed), "-o", str(base)),
            ],
            check=True,
            cwd=ROOT,
        )
    with open(base, "rb") as f:
        doc = json.load(f)
    apps: dict[tuple[str, str], int] = {}
    for item in doc["items"]:
        if item.get("kind") == "Pod" and item.get("spec", {}).get("nodeName"):
            meta = item["metadata"]
            app = meta.get("labels", {}).get("app.kubernetes.io/name")
            if app:
                key = (meta.get("namespace", "default"), app)
                apps[key] = apps.get(key, 0) + 1
    popular = sorted(apps, key=lambda k: (-apps[k], k))[:40]
    added = [
        pending_pod(i, app, ns)
        for i, (ns, app) in enumerate(popular[i % len(popular)] for i in range(spread))
    ]
    pdbs = [
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": f"{app}-pdb", "namespace": ns},
            "spec": {"selector": {"matchLabels": {"app.kubernetes.io/name": app}}, "maxUnavailable": 1},
            "status": {"disruptionsAllowed": 1},
        }
        for ns, app in popular
    ]
    doc["items"].extend(added + pdbs)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=30000)
    parser.add_argument("--spread", type=int, default=300, help="Pending pods with selector constraints")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-diagnose", action="store_true")
    args = parser.parse_args(argv)

    snapshot = ensure_snapshot(args.nodes, args.pods, args.spread, args.seed)
    print(f"snapshot {snapshot.name}: {snapshot.stat().st_size / 1e6:.0f} MB")
    print("load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    baseline = float(child(JSON_LOAD, str(snapshot))[0])
    total, load, explain, count, peak, work = child(ENGINE, str(snapshot))
    print(f"json.load                   {baseline:7.2f} s")
    print(
        f"why-pending engine          {float(total):7.2f} s = {float(total) / baseline:5.2f}x"
        f"  (load {float(load):.2f} s, explain {float(explain):.2f} s = {float(explain) / baseline:.2f}x"
        f" for {count} explanations; peak {float(peak):.0f} MiB)"
    )
    print(f"pods visited by selector queries: {work}")
    if not args.no_diagnose:
        exe = Path(sys.executable).with_name("gpuplane")
        cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "gpuplane"]
        start = time.perf_counter()
        subprocess.run(
            [*cmd, "diagnose", "--cluster", str(snapshot), "-f", "json"],
            stdout=subprocess.DEVNULL,
            cwd=ROOT,
            check=False,
        )
        took = time.perf_counter() - start
        print(f"gpuplane diagnose -f json   {took:7.2f} s = {took / baseline:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
