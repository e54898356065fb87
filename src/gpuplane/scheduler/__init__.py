"""A model of kube-scheduler (default profile): plugins, FitError messages, preemption,
and the layers in front of it (gates, gangs, Kueue, quota)."""
