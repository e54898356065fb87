"""Rule modules, one per category of spec/rules.md; each is imported by
:func:`gpuplane.lint.registry.all_rules` (pkgutil discovery), which registers its rules."""
