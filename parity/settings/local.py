"""Development on a laptop: DEBUG on unless told otherwise."""

from parity.settings.base import *  # noqa: F403
from parity.settings.base import env_bool

DEBUG = env_bool("DEBUG", True)
