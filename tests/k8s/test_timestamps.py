"""The one metav1.Time reader (k8s/timestamps) that StorageClass defaulting and preemption share."""

from __future__ import annotations

from gpuplane.k8s.timestamps import rfc3339_seconds


def test_rfc3339_text_reads_as_epoch_seconds() -> None:
    assert rfc3339_seconds("1970-01-01T00:01:40Z") == 100.0
    assert rfc3339_seconds("2026-03-01T00:00:00Z") == 1772323200.0
    assert rfc3339_seconds("2026-03-01T01:00:00+01:00") == 1772323200.0


def test_text_that_is_no_time_reads_as_none() -> None:
    assert rfc3339_seconds("yesterday") is None
    assert rfc3339_seconds("2026-13-01T00:00:00Z") is None
