"""A `.env` file for a laptop: ``KEY=value`` lines that fill in what the environment leaves unset.

The environment always wins, so production (which sets its variables) is unaffected, and the
docker image never contains a `.env` (.dockerignore). DJANGO_SETTINGS_MODULE is chosen before
settings load, so it cannot come from here.
"""

import os
import re
from pathlib import Path

DEFAULT_PATH = Path(__file__).resolve().parent.parent.parent / ".env"
_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")
_INLINE_COMMENT = re.compile(r"\s+#.*$")


def dotenv_values(text: str) -> dict[str, str]:
    """``KEY=value`` pairs; blank lines and ``#`` comments skipped, quotes removed, and a
    `` # comment`` after an unquoted value dropped (as docker compose reads env files)."""
    values = {}
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None or line.lstrip().startswith("#"):
            continue
        key, value = match.groups()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        else:
            value = _INLINE_COMMENT.sub("", value)
        values[key] = value
    return values


def dotenv_load(path: Path | None = None) -> None:
    """Set each variable of the file (``PARITY_ENV_FILE``, default the repository's `.env`) that
    the environment does not already set."""
    path = path or Path(os.environ.get("PARITY_ENV_FILE") or DEFAULT_PATH)
    if path.is_file():
        for key, value in dotenv_values(path.read_text()).items():
            os.environ.setdefault(key, value)
