"""A project's backend-suffix pattern: where its runner writes the backend into a test's name.

Many suites name one logical test once per backend: PyTorch's ``TestFooCUDA.test_x_cuda_float32``,
SQLAlchemy's ``ComponentReflectionTest_postgresql+psycopg2_15_20``, a matrix job's classname
prefix (``postgresql.tests.test_models.BookTest``). The pattern is a regular expression with a
named group ``backend`` around the backend's token, for the JUnit classname (``class``), the test
name (``name``), or both. What the pattern matches is removed (the first match); context to keep
goes in lookarounds (``(?=_|$)``).

It runs in the device step of ``ids.py`` and follows the device rule's safety (``device_tokens``
and ``class_suffixes`` are PyTorch's spelling of the same idea): when both patterns are given, a
test loses its backend only when its class and its name both carry one, and the same one
(compared case-blind: ``CUDA`` and ``cuda``), so a generic class's ``test_cuda_graphs`` keeps its
name. With one pattern, that part alone loses it. The classname pattern sees the classname as the
report wrote it, before it is read as ``module.Class``, so a prefix or a token the runner put
inside a dotted classname goes before the file is worked out.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PARTS = ("class", "name")


class BackendPatternError(ValueError):
    """``part`` is ``class`` or ``name`` (or ``""`` for the rule as a whole)."""

    def __init__(self, part: str, problem: str) -> None:
        super().__init__(problem)
        self.part = part


@dataclass(frozen=True)
class BackendPattern:
    """The regexes as written (``None``: that part carries no backend), compiled once."""

    class_pattern: str | None
    name_pattern: str | None
    class_regex: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    name_regex: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for attribute, pattern in (
            ("class_regex", self.class_pattern),
            ("name_regex", self.name_pattern),
        ):
            object.__setattr__(self, attribute, re.compile(pattern) if pattern else None)

    @property
    def paired(self) -> bool:
        return self.class_regex is not None and self.name_regex is not None

    def split_class(self, classname: str) -> tuple[str, str] | None:
        """(backend, the classname without it), or None when the classname names none."""
        return _split(self.class_regex, classname)

    def split_name(self, name: str) -> tuple[str, str] | None:
        return _split(self.name_regex, name)

    def to_data(self) -> dict[str, str]:
        data = {"class": self.class_pattern, "name": self.name_pattern}
        return {part: pattern for part, pattern in data.items() if pattern}


def _split(regex: re.Pattern[str] | None, text: str) -> tuple[str, str] | None:
    if regex is None:
        return None
    match = regex.search(text)
    if match is None or not match["backend"]:
        return None
    rest = text[: match.start()] + text[match.end() :]
    # A pattern that would leave nothing names the whole class or test, not its backend.
    return (match["backend"].casefold(), rest) if rest else None


def backend_pattern_parse(data: object) -> BackendPattern | None:
    """A pattern from JSON/YAML-loaded data: ``{"class": regex, "name": regex}`` (either may
    be left out), or None for ``None``/``{}``. Raises BackendPatternError naming the part."""
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise BackendPatternError(
            "", f'expected a mapping like {{"class": "…", "name": "…"}}, got {type(data).__name__}'
        )
    unknown = sorted(str(key) for key in data if key not in PARTS)
    if unknown:
        raise BackendPatternError(unknown[0], "unknown key (expected class, name)")
    patterns = {part: _checked(part, data.get(part)) for part in PARTS}
    if not any(patterns.values()):
        return None
    return BackendPattern(class_pattern=patterns["class"], name_pattern=patterns["name"])


def _checked(part: str, pattern: Any) -> str | None:
    if pattern is None or pattern == "":
        return None
    if not isinstance(pattern, str):
        raise BackendPatternError(
            part, f"expected a regular expression, got {type(pattern).__name__}"
        )
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise BackendPatternError(part, f"invalid regular expression {pattern!r}: {exc}") from exc
    if "backend" not in compiled.groupindex:
        raise BackendPatternError(
            part,
            f"{pattern!r} has no group named 'backend': put (?P<backend>…) around the part "
            "that names the backend, e.g. _(?P<backend>cuda|cpu)$",
        )
    if compiled.fullmatch(""):
        raise BackendPatternError(
            part, f"{pattern!r} matches an empty {part}: it must match the backend's token"
        )
    return pattern
