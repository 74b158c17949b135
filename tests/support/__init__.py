"""Helpers the test suites build on (software authenticator, factories)."""
