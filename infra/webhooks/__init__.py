"""Activity webhooks: the pure parts of the notifier (PROTOCOL.md §9).

``signing`` builds the ``X-Turnkey-*`` headers and the Ed25519 signature, ``jwks`` publishes the
verification keys, ``destinations`` decides where a delivery may go, ``schedule`` decides when it
is tried again, and ``payloads`` builds the bytes that are sent. None of them touches the
database, the broker or the environment.
"""
