"""Settings modules: ``base`` and the thin ``local``, ``production`` and ``test`` beside it.

Whichever is chosen, a `.env` file first fills in what the environment leaves unset.
"""

from parity.settings.dotenv import dotenv_load

dotenv_load()
