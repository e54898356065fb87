"""Where lint looks for unrendered template placeholders (gpuplane.lint.placeholders)."""

from __future__ import annotations

from gpuplane.lint.placeholders import placeholder_fields
from gpuplane.sources.manifest import Manifest


def test_managed_fields_are_not_read_but_the_fields_they_describe_are() -> None:
    """A kubectl dump's ``metadata.managedFields`` is the server's bookkeeping: a merge key that
    carries a placeholder there is reported once, at the field itself."""
    data = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "managedFields": [
                {
                    "manager": "kubectl",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:containers": {'k:{"name":"{{ .Values.name }}"}': {".": {}}}}},
                }
            ],
        },
        "spec": {"containers": [{"name": "{{ .Values.name }}", "image": "x"}]},
    }
    assert placeholder_fields(Manifest(data, "p.yaml", 1, 0)) == [("spec", "containers", 0, "name")]
