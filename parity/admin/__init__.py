"""The admin, registered one way: ``@admin.register`` in one module per model module of
``parity/models/`` (projects, runs, results, reasons, the engine's tables, the digest).

One package, because ``parity`` is one Django app: Django's autodiscovery imports
``parity.admin`` and nothing else, so this package imports its modules, and no admin is
registered from ``AppConfig.ready`` or from the bottom of another module. Writes that have a
service (triage) go through it from here, as the API's do.
"""

from parity.admin import (  # noqa: F401
    classification,
    digest,
    parity,
    projects,
    reasons,
    results,
    runs,
    sign_in,
    suites,
    webhooks,
)
