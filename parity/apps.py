from django.apps import AppConfig, apps


class ParityConfig(AppConfig):
    name = "parity"
    verbose_name = "Parity"

    def ready(self) -> None:
        from parity.models import cleanup  # noqa: F401  (receivers for what FKs cannot cascade)

        if apps.is_installed("allauth.socialaccount"):  # a sign-in provider is configured
            from parity.sign_in import receivers  # noqa: F401
