"""The seal: the keyring encrypted under one root key, the root key wrapped by a seal.

``sealed_file`` (the ``keyring.sealed`` document), ``shares`` (SLIP-39 split and combine,
recovery keys), ``seals`` (static, shamir, transit, pkcs11, awskms), ``state`` (a process's
sealed/unsealed state), ``admin`` (the per-process Unix socket ``walletd operator`` talks to),
``legacy`` (importing the plaintext key files of older deployments). docs/CUSTODY.md.
"""
