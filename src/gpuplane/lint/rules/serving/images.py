"""Pulling large GPU images."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.lint.finding import Finding, SetValue
from gpuplane.lint.rules._common import where
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext


# Image references (lower-case substrings) of framework/serving images that are several GB
# (reference/platform.md §2.7: vLLM + PyTorch + CUDA images are commonly 10-20 GB).
LARGE_IMAGE_HINTS = (
    "vllm/vllm-openai",
    "vllm-openai",
    "text-generation-inference",
    "tritonserver",
    "nvcr.io/nvidia/pytorch",
    "nvcr.io/nvidia/tensorflow",
    "nvcr.io/nvidia/nemo",
    "nvcr.io/nim/",
    "tensorrt-llm",
    "tensorrt_llm",
    "lmsysorg/sglang",
    "pytorch/pytorch",
    "deepspeed",
    "nvcr.io/nvidia/cuda",
    "nvidia/cuda",
    "rocm/pytorch",
    "rocm/vllm",
    "huggingface/transformers-pytorch-gpu",
    "nvcr.io/nvidia/dynamo",
)


def _image_tag(image: str) -> tuple[str | None, bool]:
    """``(tag, has_digest)`` of an image reference."""
    if "@" in image:
        return None, True
    last = image.rsplit("/", 1)[-1]
    return (last.rsplit(":", 1)[1], False) if ":" in last else (None, False)


def _is_large(image: str) -> bool:
    low = image.lower()
    if any(h in low for h in LARGE_IMAGE_HINTS):
        return "nvidia/cuda" not in low or "devel" in low or "cudnn" in low
    return False


@rule(
    id="image-pull-always-large",
    severity="info",
    category="serving",
    summary="Huge GPU image pulled on every start (imagePullPolicy Always or :latest): slow cold starts.",
    fixable=True,
)
def image_pull_always_large(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        for c in ctx.containers(ps, ("containers",)):
            image = c.data.get("image")
            if not isinstance(image, str) or not _is_large(image):
                continue
            tag, digest = _image_tag(image)
            floating = not digest and (tag is None or tag == "latest")
            policy = c.data.get("imagePullPolicy")
            if policy is None:
                if not floating:
                    continue
                yield ctx.report(
                    ps.source,
                    (*c.path, "image"),
                    f"{where(ps, c)} runs the multi-GB image {image} without a pinned tag, so "
                    "its pull policy defaults to Always: every start re-checks the registry and pulls new layers "
                    "when the tag moved, adding minutes to cold starts.",
                    "Pin a version tag or digest (the policy then defaults to IfNotPresent) and pre-cache the image "
                    "on GPU nodes.",
                )
            elif policy == "Always":
                patch = () if floating else (SetValue((*c.path, "imagePullPolicy"), "IfNotPresent"),)
                yield ctx.report(
                    ps.source,
                    (*c.path, "imagePullPolicy"),
                    f"{where(ps, c)} pulls the multi-GB image {image} with imagePullPolicy "
                    "Always: every start and restart goes to the registry, slowing cold starts and failing with "
                    "ImagePullBackOff when the registry is unreachable.",
                    "Use imagePullPolicy: IfNotPresent with a pinned tag or digest."
                    + (" Pin a version instead of :latest first." if floating else ""),
                    patch=patch,
                )
