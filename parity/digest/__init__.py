"""The weekly email digest of a project's parity changes (README, "Weekly digest")."""
