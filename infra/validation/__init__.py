"""Validators for user-supplied values that are more than a type: contacts, contract
interfaces, organization features and per-organization resource limits.

Each validator raises :class:`infra.errors.InvalidRequest` (or, for limits,
:class:`infra.errors.ResourceExhausted`) with a message that names the field and the rule.
"""
