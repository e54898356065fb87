"""How serving-parallelism-gpu-mismatch reads engine flags from command/args/env (lint/rules/serving/_engines.py)."""

from __future__ import annotations

from gpuplane.lint.rules.serving._engines import engine_runs


def _one(container: dict) -> tuple[str, dict[str, int], bool, int | None, int | None]:
    (run,) = engine_runs(container)
    return run.engine, run.sizes, run.unknown, run.total_gpus(), run.local_gpus()


def test_vllm_spellings_and_kubelet_expansion() -> None:
    c = {"command": ["vllm", "serve", "m", "-tp=$(TP)", "-pp", "2"], "env": [{"name": "TP", "value": "4"}]}
    assert _one(c) == ("vllm", {"tp": 4, "pp": 2}, False, 8, None)
    (run,) = engine_runs(c)
    assert run.path == ("command", 3)  # the item holding the first size flag
    c = {
        "command": ["python3", "-m", "vllm.entrypoints.openai.api_server"],
        "args": ["--data-parallel-size=2", "-dpl", "1"],
    }
    assert _one(c) == ("vllm", {"dp": 2, "dpl": 1}, False, 2, 1)


def test_image_entrypoint_and_shell_scripts() -> None:
    assert _one({"image": "docker.io/vllm/vllm-openai:v0.9.0", "args": ["--tensor-parallel-size", "2"]})[
        :2
    ] == (
        "vllm",
        {"tp": 2},
    )
    script = "echo start; exec python3 -m sglang.launch_server --tp ${TP} \\\n  --nnodes 2 --dp-size 2 && echo done"
    c = {"command": ["/bin/bash", "-c", script], "env": [{"name": "TP", "value": "8"}]}
    assert _one(c) == ("sglang", {"tp": 8, "nnodes": 2, "dp": 2}, False, 16, 8)


def test_unknown_values_and_other_engines() -> None:
    # a variable the manifest does not define, a config file, vllm-omni stage configs: unknown
    assert _one({"command": ["vllm", "serve", "m", "--tensor-parallel-size", "$(TP)"]})[2] is True
    assert _one({"command": ["vllm", "serve", "--config", "c.yaml"]})[2] is True
    assert _one({"command": ["vllm", "serve", "m", "--omni"]})[2] is True
    tgi = {
        "image": "ghcr.io/huggingface/text-generation-inference:2.4",
        "env": [{"name": "NUM_SHARD", "value": "2"}],
    }
    assert _one(tgi) == ("tgi", {"shards": 2}, False, 2, None)
    assert _one({**tgi, "args": ["--sharded", "false"]})[3] == 1
    assert _one({"command": ["trtllm-serve", "serve", "m", "--tp_size", "4", "--pp_size", "2"]})[3] == 8
    assert engine_runs({"command": ["python", "train.py", "--tensor-parallel-size", "8"]}) == []
