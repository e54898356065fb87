"""The service layer under the CLI and the MCP server: one request in, one outcome out.

Both front ends call the same function for a command (``gpuplane.app.lint.run`` ...), so the
semantics every command shares live here once: rule-id validation, ``.gpuplane.yaml``
discovery, manifest and cluster loading with their notes, and the errors that make input
unusable. A front end only parses its arguments, renders the outcome and picks the exit code.

- :class:`~gpuplane.app.outcome.AppError`: the input is unusable (one line; CLI exit 2, MCP tool
  error).
- :class:`~gpuplane.app.outcome.Messages`: the notes, warnings and input errors a command meets,
  in order; the CLI prints each as it comes (stderr), MCP returns the errors in the document.
- :class:`~gpuplane.app.outcome.Surface`: how the caller names things (``--disable`` or
  ``disable``, ``gpuplane rules`` or the ``list_rules`` tool), so messages stay those of the
  front end that asked.

Nothing here imports click, rich or the MCP SDK.
"""
