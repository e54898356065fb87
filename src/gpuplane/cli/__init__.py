"""Command-line interface: one small module per command (parse, call an engine, pick a report)."""
