from django.apps import AppConfig


class ParityConfig(AppConfig):
    name = "parity"
    verbose_name = "Parity"

    def ready(self) -> None:
        from parity.models import cleanup  # noqa: F401  (receivers for what FKs cannot cascade)
