from django.apps import AppConfig


class ParityConfig(AppConfig):
    name = "parity"
    verbose_name = "Parity"

    def ready(self) -> None:
        # Admin for the engine's tables lives apart from parity/admin.py.
        from parity import admin_parity  # noqa: F401
        from parity.models import cleanup  # noqa: F401  (receivers for what FKs cannot cascade)
