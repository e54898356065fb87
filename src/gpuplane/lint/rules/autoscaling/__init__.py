"""Rules of category ``autoscaling``: Karpenter NodePools and GPU node classes."""
