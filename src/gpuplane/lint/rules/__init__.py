"""The lint rules: one package per category of spec/rules.md, one module per theme, each rule's
docs in ``<rule-id>.md`` beside its module. :mod:`gpuplane.ruleset` imports them when the layer
above asks for this package (``lint.engine.LINT_RULE_PACKAGES``, ``rule_catalog``)."""
