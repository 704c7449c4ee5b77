"""Serve Plotly's bundle from the installed ``plotly`` package as ``parity/vendor/plotly.min.js``
rather than keeping a copy of that large file in the repository. ``collectstatic`` copies it
like any other static file, so in production WhiteNoise serves it compressed, under a hashed
name, cached for good; ``runserver`` and the test server find it through this finder."""

from pathlib import Path

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PLOTLY_DIR = Path(plotly.__file__).resolve().parent / "package_data"
PLOTLY_FILE = "plotly.min.js"
PREFIX = "parity/vendor"
PLOTLY_STATIC = f"{PREFIX}/{PLOTLY_FILE}"


class PlotlyFinder(BaseFinder):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=PLOTLY_DIR)
        # collectstatic and WhiteNoise put a storage's files under its ``prefix``.
        self.storage.prefix = PREFIX

    def check(self, **kwargs) -> list:
        return []

    def find(self, path: str, find_all: bool = False, **kwargs) -> str | list[str]:
        if path != PLOTLY_STATIC:
            return [] if find_all else ""
        found = str(PLOTLY_DIR / PLOTLY_FILE)
        return [found] if find_all else found

    def list(self, ignore_patterns):
        yield PLOTLY_FILE, self.storage
