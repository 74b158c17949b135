"""Wallets, accounts, standalone keys and their custody (issue 3)."""
