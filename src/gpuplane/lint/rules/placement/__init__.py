"""Rules of category ``placement``: taints, selectors and spreading of GPU pods."""
