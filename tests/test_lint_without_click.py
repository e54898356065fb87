"""``gpuplane lint PATH...`` without flags runs without click and prints what the click CLI prints.

``gpuplane.cli.entry`` hands flag-less ``lint`` arguments to ``gpuplane.cli.lint_run.run_paths``
(start-up time, issue 14 item 4); every other command line goes through click. Each case here
runs both ways, in fresh interpreters from the same folder, and compares exit code, stdout and
stderr byte for byte.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplane.cli import entry
from gpuplane.cli import main as cli_main
from gpuplane.cli.lint import lint as lint_command
from gpuplane.cli.lint_run import only_paths, run_lint_command

FAST = "import sys; from gpuplane.cli.entry import main; sys.argv[0] = 'gpuplane'; main()"
CLICK = "import sys; from gpuplane.cli.main import main; sys.argv[0] = 'gpuplane'; main()"
PROBE = (
    "import json, sys; from gpuplane.cli.entry import main\n"
    "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
    "print(json.dumps({'exit': code, 'click': 'click' in sys.modules}))"
)

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: train, namespace: ml}
spec:
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:24.01-py3
    resources: {limits: {nvidia.com/gpu: 1}}
"""
HALF_GPU = GPU_POD.replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 0.5")
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {LOG_LEVEL: info}\n"
TYPO_SUPPRESSION = GPU_POD.replace(
    "metadata: {name: train, namespace: ml}",
    "metadata: {name: train, namespace: ml, annotations: {gpuplane.io/ignore: gpu-taint-not-toleratd}}",
)


def _run(code: str, args: list[str], cwd: Path, cache: Path) -> tuple[int, str, str]:
    env = {**os.environ, "GPUPLANE_CACHE_DIR": str(cache)}
    env.pop("GPUPLANE_DEBUG", None)
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    (tmp_path / "half.yaml").write_text(HALF_GPU)
    (tmp_path / "cm.yaml").write_text(CONFIGMAP)
    (tmp_path / "typo.yaml").write_text(TYPO_SUPPRESSION)
    (tmp_path / "broken.yaml").write_text("kind: Pod\nmetadata: {name: x\n")
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "a.yaml").write_text(GPU_POD + "---\n" + CONFIGMAP)
    return tmp_path


CASES = {
    "gpu pod (an info finding)": ["pod.yaml"],
    "half a GPU (an error, exit 1)": ["half.yaml"],
    "configmap (no finding)": ["cm.yaml"],
    "files and a folder": ["pod.yaml", "k8s", "cm.yaml"],
    "missing path (exit 2)": ["pod.yaml", "nope.yaml"],
    "invalid yaml": ["broken.yaml", "pod.yaml"],
    "unknown rule id in a suppression (a warning)": ["typo.yaml"],
}


@pytest.mark.parametrize("paths", CASES.values(), ids=CASES.keys())
def test_the_same_output_as_the_click_command(
    folder: Path, tmp_path_factory: pytest.TempPathFactory, paths: list[str]
) -> None:
    cache = tmp_path_factory.mktemp("cache")
    fast = _run(FAST, ["lint", *paths], folder, cache)
    slow = _run(CLICK, ["lint", *paths], folder, cache)
    assert fast == slow
    assert fast[0] in (0, 1, 2)


@pytest.mark.parametrize(
    "config",
    [
        "disable: [gpu-taint-not-tolerated]\n",
        "fail-on: info\n",
        "severity: {gpu-taint-not-tolerated: error}\n",
        "fail-on: [\n",
    ],
    ids=["disable", "fail-on", "severity", "broken config (exit 2)"],
)
def test_the_config_file_is_read_the_same_way(
    folder: Path, tmp_path_factory: pytest.TempPathFactory, config: str
) -> None:
    (folder / ".gpuplane.yaml").write_text(config)
    cache = tmp_path_factory.mktemp("cache")
    assert _run(FAST, ["lint", "pod.yaml"], folder, cache) == _run(CLICK, ["lint", "pod.yaml"], folder, cache)


def test_flag_less_lint_does_not_import_click_and_flags_do(
    folder: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cache = tmp_path_factory.mktemp("cache")
    for args, uses_click in ((["lint", "pod.yaml"], False), (["lint", "-f", "json", "pod.yaml"], True)):
        code, out, _ = _run(PROBE, args, folder, cache)
        assert code == 0
        assert json.loads(out.strip().splitlines()[-1]) == {"exit": 0, "click": uses_click}


def test_only_plain_paths_skip_click(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("_GPUPLANE_COMPLETE", raising=False)
    assert only_paths(["a.yaml", "k8s/"])
    assert not only_paths([])
    assert not only_paths(["-"])  # stdin
    assert not only_paths(["a.yaml", "--fix"])
    assert not only_paths(["--", "a.yaml"])
    assert not only_paths(["--help"])
    monkeypatch.setenv("_GPUPLANE_COMPLETE", "bash_source")  # click answers completion first
    assert not only_paths(["a.yaml"])


def test_the_defaults_are_the_flags_defaults() -> None:
    """run_lint_command's keyword defaults are the values click passes for flags not given."""
    defaults = {
        name: p.default
        for name, p in inspect.signature(run_lint_command).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
    passed = lint_command.make_context("lint", ["pod.yaml"]).params  # what click calls the command with
    assert passed.pop("paths") == ("pod.yaml",)
    assert defaults == passed


def _both(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], path: str
) -> list[tuple[object, str, str]]:
    outcomes = []
    for run in (entry.main, cli_main.main):
        monkeypatch.setattr(sys, "argv", ["gpuplane", "lint", path])
        with pytest.raises(SystemExit) as exc:
            run()
        out, err = capsys.readouterr()
        outcomes.append((exc.value.code, out, err))
    return outcomes


def test_internal_error_and_ctrl_c_end_the_same_way(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    import gpuplane.app.lint

    monkeypatch.delenv("GPUPLANE_DEBUG", raising=False)

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("node-7")

    monkeypatch.setattr(gpuplane.app.lint, "run", broken)
    fast, slow = _both(monkeypatch, capsys, str(folder / "pod.yaml"))
    assert fast == slow
    assert fast[0] == 3
    assert fast[2].startswith("gpuplane: internal error in lint (")

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(gpuplane.app.lint, "run", interrupted)
    fast, slow = _both(monkeypatch, capsys, str(folder / "pod.yaml"))
    assert fast == slow == (1, "", "\nAborted!\n")
