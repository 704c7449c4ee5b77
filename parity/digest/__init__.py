"""The weekly email digest of a project's parity changes (docs/digest.md)."""
