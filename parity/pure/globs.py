"""Exemption patterns over canonical test IDs (``file::Class::name``), as anchored regular
expressions that Postgres (``~``) and Python (``re``) read the same way.

A pattern names test files, or tests within files:

* ``test/test_ops.py`` or ``test/spmd/**``: no ``::``, a glob over file paths; it matches every
  test of the files it matches ("file-level"). ``*`` and ``?`` stay within one folder, ``**``
  crosses folders.
* ``test/test_ops.py::TestOps::test_*_complex64``: a file glob, then a glob over the rest of
  the ID, where ``*`` and ``?`` match anything. ``**::TestOps::test_x`` names a class's test in
  whichever file defines it (PyTorch's disabled lists name classes, not files).

Wildcards of the file part never match ``:``, so a pattern never reaches past the ``::`` that
ends a test's file into another file's tests. Everything but ``*`` and ``?`` is literal,
brackets included: they are pytest's parameter brackets, not character classes.

Pure: no Django.
"""

import re

SEP = "::"
MAX_PATTERN_CHARS = 1000

_FILE_WILDCARDS = {"**": "[^:]*", "*": "[^/:]*", "?": "[^/:]"}
_TEST_WILDCARDS = {"**": ".*", "*": ".*", "?": "."}
_WILDCARD = re.compile(r"\*\*|\*|\?")


class PatternError(ValueError):
    """A pattern that cannot name tests; the message says why."""


def is_file_level(pattern: str) -> bool:
    """True when ``pattern`` names whole files (CI can leave them out of its run)."""
    return SEP not in pattern


def pattern_regex(pattern: str) -> str:
    """The anchored regular expression over test keys that ``pattern`` stands for."""
    pattern = pattern_check(pattern)
    file_part, sep, test_part = pattern.partition(SEP)
    regex = "^" + _translate(file_part, _FILE_WILDCARDS) + SEP
    if sep:
        regex += _translate(test_part, _TEST_WILDCARDS) + "$"
    return regex


def pattern_check(pattern: str) -> str:
    """``pattern`` stripped, or ``PatternError`` saying what is wrong with it."""
    pattern = pattern.strip()
    if not pattern:
        raise PatternError("A pattern cannot be empty.")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"A pattern has at most {MAX_PATTERN_CHARS} characters.")
    file_part, sep, test_part = pattern.partition(SEP)
    if not sep and not file_part.strip("*?/"):
        raise PatternError(
            f"'{pattern}' names every file: give a path, such as test/spmd/** or test/test_ops.py."
        )
    if sep and not test_part:
        raise PatternError(f"'{pattern}' ends with '::': name the tests after it, or drop it.")
    return pattern


def pattern_shape(pattern: str) -> str:
    """How the database can find the keys ``pattern`` matches without its regex, when it can:
    ``key`` (no wildcard: one test ID), ``file`` (no wildcard, no ``::``: the keys of one file),
    ``anyfile`` (``**::`` then no wildcard: one class's test in whatever file), else ``glob``."""
    pattern = pattern_check(pattern)
    file_part, sep, test_part = pattern.partition(SEP)
    if not _WILDCARD.search(pattern):
        return "key" if sep else ("file" if not pattern.endswith(":") else "glob")
    if file_part == "**" and sep and not _WILDCARD.search(test_part):
        return "anyfile"
    return "glob"


def pattern_literal(pattern: str) -> str:
    """The longest run of ``pattern`` with no wildcard: every key it matches contains it, so a
    cheap substring test can skip most keys before the regular expression runs."""
    pattern = pattern_check(pattern)
    spelled = pattern + SEP if is_file_level(pattern) else pattern
    return max(_WILDCARD.split(spelled), key=len)


def key_parts(key: str) -> tuple[str | None, str | None]:
    """What a ``file`` and an ``anyfile`` pattern equal when they match ``key``: its file part
    (before its first "::", which escaping keeps out of file parts), and ``**::`` + the rest when
    no ":" comes before that "::". None where the key has no such part. The database computes
    the same (``parity.definitions``)."""
    sep = key.find(SEP)
    if sep < 0:
        return None, None
    return key[:sep], (f"**{SEP}{key[sep + 2 :]}" if key.find(":") == sep else None)


def file_matches(regex: str, path: str) -> bool:
    """Whether a file-level pattern's ``regex`` matches every test of the file ``path``."""
    return re.match(regex, path + SEP) is not None


def key_matches(regex: str, key: str) -> bool:
    return re.match(regex, key) is not None


def _translate(glob: str, wildcards: dict[str, str]) -> str:
    parts, end = [], 0
    for wildcard in _WILDCARD.finditer(glob):
        parts.append(regex_literal(glob[end : wildcard.start()]))
        parts.append(wildcards[wildcard.group()])
        end = wildcard.end()
    parts.append(regex_literal(glob[end:]))
    return "".join(parts)


def regex_literal(text: str) -> str:
    """``text`` as a regular expression matching itself, in Python and in Postgres alike."""
    # A backslash before any ASCII punctuation is a literal in both dialects; letters, digits
    # and non-ASCII characters are literal as they are (a backslash before them is an escape).
    return "".join("\\" + c if c.isascii() and not c.isalnum() else c for c in text)
