"""The activity pipeline: submit, decide, execute, wait, lifecycle and votes."""
