"""One module per upstream kube-scheduler plugin (pkg/scheduler/framework/plugins/<name>)."""
