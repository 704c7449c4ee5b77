from django.apps import AppConfig


class ParityConfig(AppConfig):
    name = "parity"
    verbose_name = "Parity"
