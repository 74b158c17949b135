"""Secrets stored beside keys: import targets, sealed storage, metadata and export."""
