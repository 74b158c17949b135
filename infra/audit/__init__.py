"""The verifiable activity log (issue 22): leaves, the Merkle tree, signed checkpoints, proofs.

* ``merkle`` — RFC 6962/9162 hashing and proofs (pure);
* ``canonical`` — canonical JSON (RFC 8785 style) and digests;
* ``note`` — C2SP ``tlog-checkpoint`` text signed as a C2SP ``signed-note`` (Ed25519);
* ``leaves`` — what a leaf holds, staged in the transaction of the change it records;
* ``sequencer`` — gives staged leaves their dense indexes and extends the tree;
* ``log_key`` / ``checkpoints`` — the deployment's log key and the checkpoints it signs;
* ``proofs`` — inclusion and consistency proofs from the stored tree;
* ``verify`` / ``witness`` — what ``walletd audit verify|witness`` run.

docs/AUDIT.md says what the log proves and what it does not.
"""
