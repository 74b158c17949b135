"""Activity webhooks (PROTOCOL.md §9).

Pure parts (no database, broker or environment): ``signing`` builds the ``X-Turnkey-*``
headers and the Ed25519 signature and rotates keys, ``jwks`` publishes verification keys,
``destinations`` decides where a delivery may go, ``schedule`` decides when it is tried again,
``payloads`` builds the bytes that are sent.

Parts that use the caller's database session: ``outbox`` (the lifecycle listener writing
delivery rows in the activity's transaction), ``endpoints`` (validation, rendering, disabling),
``replay``, ``keystore`` (the ring file and its published public keys); ``infra.bootstrap``
wires them in. Sending is the ``notifier`` package's job.
"""
