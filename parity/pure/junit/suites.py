"""Which suite a case sits in, as one string: its suite label.

A label is the path of the ``<testsuite>`` elements around a case, outermost first, each by its
name and, when it has one, its ``hostname`` (Playwright writes the browser project there):
``FiltersTest / FiltersTest: chrome / FiltersTest::testFilterByNull``,
``tests/example.spec.ts @ chromium``. Suites without a name or hostname add nothing, and a case
outside every suite has the label ``""``. unittest-xml-reporting's run time at the end of a
suite's name (``TestOps-20240101120000``) is left out. Cases of one document with equal labels
are in the same suite; ingest tells a test that one report ran in several suites apart by its
label (``parity.pure.normalize.suites``).

A label costs at most ``MAX_LABEL_CHARS`` plus the suite's own name to build, whatever the
nesting above it: a longer one keeps its innermost end after ``…`` and ends with a digest of the
whole path, so distinct paths keep distinct labels and a long outer name is not copied into the
label of each suite below it.
"""

from hashlib import md5

MAX_LABEL_CHARS = 500
SEPARATOR = " / "
_DIGEST_CHARS = 16
# unittest-xml-reporting names a suite "<Class>-<YYYYMMDDHHMMSS>", the time it ran: a rerun's
# suite differs in it alone, so it is no part of which suite a case is in.
_STAMP_CHARS = 14
_ELLIPSIS = "…"


def suite_label(outer: str, name: str, hostname: str = "") -> str:
    """The label of a suite named ``name`` (on ``hostname``) inside the suite labelled ``outer``."""
    if name[-_STAMP_CHARS - 1 : -_STAMP_CHARS] == "-" and name[-_STAMP_CHARS:].isdigit():
        name = name[: -_STAMP_CHARS - 1]
    own = f"{name} @ {hostname}" if name and hostname else f"@ {hostname}" if hostname else name
    if not own:
        return outer
    label = f"{outer}{SEPARATOR}{own}" if outer else own
    if len(label) <= MAX_LABEL_CHARS:
        return label
    # The outer label stands for its whole path (by induction), so this digest does too.
    digest = md5(f"{outer}\0{own}".encode()).hexdigest()[:_DIGEST_CHARS]
    tail = f" #{digest}"
    return _ELLIPSIS + label[len(label) - MAX_LABEL_CHARS + len(_ELLIPSIS) + len(tail) :] + tail
