"""In-cluster guardrails: lint rules exported as ValidatingAdmissionPolicies (CEL, no webhook).

``cel.py`` builds the CEL fragments the policies share (where an object's pod specs are, what an
extended resource and a whole quantity are), ``catalog.py`` holds one entry per exportable rule and
the reason every other rule is not exported, ``export.py`` renders the admissionregistration.k8s.io/v1
objects. The CLI is ``gpuplane policy export``.
"""
