"""Allow ``python -m gpuplane``."""

from gpuplane.cli.main import main

main()
