"""Following work across processes: context ids, structured logs and Prometheus metrics.

- ``context``: the request, activity and organization ids of the work this thread is doing.
- ``logs``: ``WALLETD_LOG_FORMAT=json`` (one JSON object per line carrying those ids).
- ``metrics``: the Prometheus metrics every role exposes at ``/metrics``.
- ``messages``: the dramatiq middleware carrying the ids across the broker and timing messages.
"""
