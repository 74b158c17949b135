"""The ``walletd`` command: the composition of ingress, workers, consensus and notifier."""
