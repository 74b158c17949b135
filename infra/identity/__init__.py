"""Identities: users, credentials, passkeys, quotas, the root quorum and organization ancestry."""
