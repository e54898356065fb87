"""One problem found in a configuration document, with the path that locates it.

Shared by the device-plugin, ClusterPolicy and mig-parted parsers so lint rules and
``diagnose`` can turn any of them into a finding with a field path (and a line through
``Manifest.field_line``).
"""

from __future__ import annotations

from dataclasses import dataclass

ERROR = "error"
WARNING = "warning"


@dataclass(slots=True)
class ConfigProblem:
    """A message plus the path inside the config document.

    ``severity`` is ``"error"`` when the component rejects the document (the message is the
    upstream one where upstream has one) and ``"warning"`` when the component accepts it but
    ignores or misreads part of it.
    """

    message: str
    path: tuple[str | int, ...] = ()
    severity: str = ERROR

    def __str__(self) -> str:
        where = ".".join(str(p) for p in self.path)
        return f"{where}: {self.message}" if where else self.message
