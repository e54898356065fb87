"""k8s/validation.py: the API server's extended-resource checks, shared by simulate and lint.

Expected texts and paths are upstream's (pkg/apis/core/validation/validation.go,
ValidateContainerResourceRequirements / ValidateResourceQuantityValue).
"""

from __future__ import annotations

import pytest

from gpuplane.k8s.validation import (
    LIMIT_REQUIRED,
    NEGATIVE,
    NOT_EQUAL,
    NOT_INTEGER,
    ResourceError,
    container_resource_errors,
    extended_resource_errors,
    is_extended_resource,
)
from gpuplane.lint.config import LintConfig
from gpuplane.lint.engine import run_lint
from gpuplane.rule_catalog import all_rules
from gpuplane.sources.loader import load_text


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("nvidia.com/gpu", True),
        ("nvidia.com/mig-1g.10gb", True),
        ("limits.nvidia.com/gpu", True),  # only requests. is a quota prefix to IsExtendedResourceName
        ("requests.nvidia.com/gpu", False),
        ("cpu", False),  # no "/": native
        ("kubernetes.io/foo", False),  # contains "kubernetes.io/": native
        ("example.kubernetes.io/foo", False),
        ("xkubernetes.io/foo", False),  # IsPrefixedNativeResource is a substring test
        ("NVIDIA.com/gpu", False),  # requests.NVIDIA.com is not a DNS-1123 subdomain
        ("nvidia.com/gpu/x", False),  # not a qualified name
        ("nvidia.com/" + "a" * 64, False),  # name part longer than 63
    ],
)
def test_is_extended_resource_follows_upstream(name: str, expected: bool) -> None:
    assert is_extended_resource(name) is expected


def test_structured_errors_carry_the_api_paths() -> None:
    errors = container_resource_errors(
        {
            "resources": {
                "limits": {"nvidia.com/gpu": "500m", "amd.com/gpu": 2, "cpu": "500m"},
                "requests": {"amd.com/gpu": "1", "example.com/nic": -1},
            }
        }
    )
    assert errors == [
        ResourceError(NOT_INTEGER, "limits", "nvidia.com/gpu", "500m", "must be an integer"),
        ResourceError(NOT_EQUAL, "requests", "amd.com/gpu", "1", "must be equal to amd.com/gpu limit of 2"),
        ResourceError(NEGATIVE, "requests", "example.com/nic", "-1", "must be greater than or equal to 0"),
        ResourceError(
            LIMIT_REQUIRED,
            "requests",
            "example.com/nic",
            "-1",
            "Limit must be set for non overcommitable resources",
        ),
        ResourceError(
            NOT_INTEGER, "requests", "nvidia.com/gpu", "500m", "must be an integer", defaulted=True
        ),
    ]
    where = "spec.containers[0]"
    assert [e.message(where) for e in errors] == [
        'spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer',
        # field.Invalid(reqPath, ...): the requests map, not requests[amd.com/gpu]
        'spec.containers[0].resources.requests: Invalid value: "1": must be equal to amd.com/gpu limit of 2',
        'spec.containers[0].resources.requests[example.com/nic]: Invalid value: "-1": '
        "must be greater than or equal to 0",
        "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources",
        'spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "500m": must be an integer',
    ]


def test_quantities_compare_and_print_like_the_api() -> None:
    # 2000m == 2: no mismatch; the limit prints as Quantity.String()
    assert (
        container_resource_errors(
            {"resources": {"limits": {"nvidia.com/gpu": "2000m"}, "requests": {"nvidia.com/gpu": 2}}}
        )
        == []
    )
    [err] = container_resource_errors(
        {"resources": {"limits": {"nvidia.com/gpu": "3000m"}, "requests": {"nvidia.com/gpu": "2"}}}
    )
    assert err.detail == "must be equal to nvidia.com/gpu limit of 3"
    # MilliValue() % 1000: a value that rounds up to a whole milli count is an integer to the API
    assert container_resource_errors({"resources": {"limits": {"nvidia.com/gpu": "999999999n"}}}) == []
    # not a quantity at all: decoding fails first, these checks say nothing
    assert container_resource_errors({"resources": {"requests": {"nvidia.com/gpu": "lots"}}}) == []
    assert container_resource_errors({"resources": "none"}) == []
    assert extended_resource_errors("spec") == []  # type: ignore[arg-type]


GPU_RULES = ("gpu-request-without-limit", "gpu-request-limit-mismatch", "gpu-fractional-quantity")

POD = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec:
  containers:
  - name: c
    image: x
    resources:
      limits: {nvidia.com/gpu: "3000m", amd.com/gpu: 0.5}
      requests: {nvidia.com/gpu: 2, example.com/nic: 1}
"""


def test_lint_rules_report_exactly_the_api_errors() -> None:
    """One finding per API error on a written field, quoting the API's detail."""
    loaded = load_text(POD, "pod.yaml")
    rules = [m for m in all_rules() if m.id in GPU_RULES]
    result = run_lint(loaded.objects, config=LintConfig(), rules=rules)
    got = sorted((f.rule, ".".join(map(str, f.path[-3:])), f.message) for f in result.findings)
    assert got == [
        (
            "gpu-fractional-quantity",
            "resources.limits.amd.com/gpu",
            'Pod ns/p, container "c" asks for amd.com/gpu: 0.5; extended resources must be whole numbers '
            '(API: "must be an integer")',
        ),
        (
            "gpu-request-limit-mismatch",
            "resources.requests.nvidia.com/gpu",
            'Pod ns/p, container "c" requests nvidia.com/gpu: 2 but limits it to 3000m; the API server rejects it '
            '("must be equal to nvidia.com/gpu limit of 3")',
        ),
        (
            "gpu-request-without-limit",
            "resources.requests.example.com/nic",
            'Pod ns/p, container "c" requests example.com/nic: 1 without a limit; the API server rejects it '
            '("Limit must be set for non overcommitable resources")',
        ),
    ]
    spec = loaded.objects[0].data["spec"]
    api = extended_resource_errors(spec)
    assert len(api) == 4  # the fourth is the defaulted amd.com/gpu request lint does not repeat
    assert (
        'spec.containers[0].resources.requests[amd.com/gpu]: Invalid value: "500m": must be an integer' in api
    )
