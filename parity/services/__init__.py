"""Services: the writes of the parity app, ``<thing>_<action>(*, ...)`` with keyword-only
arguments, one module per domain: projects and tokens, triage (the one place its rules are
written), retention, the issue sync and filing, and the run lifecycle. Views, admin actions,
management commands and tasks call them; they call the engine, selectors and models."""
