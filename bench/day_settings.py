"""The live stack's settings (``parity.settings.test``) logging at INFO: ``day_bench.py`` reads
each recompute's time from its workers' logs."""

from parity.settings.test import *  # noqa: F403
from parity.settings.test import LOGGING

LOGGING["root"]["level"] = "INFO"
