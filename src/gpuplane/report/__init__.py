"""Renderers: turn engine results (findings, explanations) into text, JSON, SARIF, HTML."""
