"""Where the team's real data lives (``../shared`` next to the checkout), for tests that read it.

A user's clone has no ``../shared``; tests that need it skip and say why instead of failing.
"""

import os
from pathlib import Path

import pytest

REPO_DIR = Path(__file__).resolve().parent.parent
SHARED_DIR = Path(os.environ.get("PARITY_SHARED_DIR", REPO_DIR.parent / "shared"))
CORPUS_DIR = SHARED_DIR / "corpus" / "junit"
PYTORCH_XLA_DIR = SHARED_DIR / "data" / "pytorch-xla"

needs_corpus = pytest.mark.skipif(
    not (CORPUS_DIR / "MANIFEST.tsv").is_file(),
    reason=f"the JUnit corpus is not at {CORPUS_DIR} (set PARITY_SHARED_DIR to the shared folder)",
)
needs_pytorch_xla = pytest.mark.skipif(
    not (PYTORCH_XLA_DIR / "tests_inventory.tsv").is_file(),
    reason=f"the PyTorch/XLA data is not at {PYTORCH_XLA_DIR} "
    "(set PARITY_SHARED_DIR to the shared folder)",
)
