"""Code owners: a ``CODEOWNERS`` file (GitHub's syntax) or a YAML of path patterns -> owners,
read into ordered rules, and which rule owns a test file.

GitHub's semantics, which GitLab and most tools share:

* One rule a line: a path pattern, then its owners (``@user``, ``@org/team``, an email),
  separated by spaces. ``#`` starts a comment (a whole line, or after the owners). A pattern
  with no owners *un-owns* what it matches: the files keep no owner even if an earlier rule
  named some.
* **The last matching rule wins**; the earlier ones are not merged in.
* Patterns are gitignore's: ``*`` and ``?`` stay within one folder; ``**/`` at the start,
  ``/**/`` inside and ``/**`` at the end cross folders. A pattern starting with ``/``, or with a
  ``/`` inside it, is anchored at the repository's root; one without (``*.py``, ``apps/``)
  matches at any depth. A pattern ending in ``/`` names a folder: everything under it. A
  pattern naming a folder without the ``/`` (``/docs``) also owns everything under it, except
  one ending in ``/*`` (``docs/*``), which owns the folder's files but not its subfolders'
  (GitHub's documented exception to gitignore). Paths are case sensitive.
* Not in GitHub's syntax, so refused line by line (GitHub ignores such a line too): ``!``
  negation, and ``[...]`` character classes (taken literally, as GitHub does; parity's test
  paths rarely hold brackets). ``\\`` escapes the next character (``\\#``, a space).

Owners are compared without case (GitHub's user and team names have none): ``@Chillee`` and
``@chillee`` are one owner, kept lower-cased.

**Paths.** CODEOWNERS patterns are relative to the repository's root; parity matches them
against each test's *file* as ingest stored it (``clean_path``: forward slashes, no ``./``,
minus the project's checkout prefixes). ``path_normalize`` repeats that cleaning (so a file
recorded as ``./test/x.py``, ``/test/x.py`` or ``test\\x.py`` matches ``/test/``), and ``root``
says where parity's paths start inside the repository when they are not at its root (tests
stored as ``test_ops.py`` in a repository holding them in ``test/``: root ``test``).

Each rule's regular expression reads the same in Python (``re``) and Postgres (``~``), as the
exemption globs' do (``parity.pure.globs``), so the engine matches new files in SQL. Pure: no
Django.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

import yaml

from parity.pure.globs import regex_literal

MAX_RULES = 5000
MAX_OWNERS = 50
MAX_OWNER_CHARS = 200

_OWNER = re.compile(
    r"^(@[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?|[^@\s]+@[^@\s]+)$"
)


class OwnersError(ValueError):
    """A file that cannot be read as owners at all (not one bad line: those are skipped)."""


@dataclass(frozen=True)
class OwnerRule:
    line: int  # in the file, from 1; for YAML, the entry's position
    pattern: str
    owners: tuple[str, ...]  # empty: the rule un-owns what it matches
    regex: str  # anchored, over repository-relative paths


@dataclass(frozen=True)
class Skipped:
    line: int
    text: str
    why: str


@dataclass(frozen=True)
class OwnersFile:
    rules: list[OwnerRule]
    skipped: list[Skipped]


def codeowners_parse(text: str) -> OwnersFile:
    """The rules of a ``CODEOWNERS`` file, in order; lines GitHub would ignore are skipped and
    said why."""
    rules, skipped = [], []
    for number, raw in enumerate(text.splitlines(), start=1):
        tokens = _tokens(raw)
        if not tokens:
            continue  # blank or a comment
        pattern, owners = tokens[0], tokens[1:]
        try:
            rules.append(rule_make(line=number, pattern=pattern, owners=owners))
        except OwnersError as error:
            skipped.append(Skipped(line=number, text=raw.strip(), why=str(error)))
    _check_size(rules)
    return OwnersFile(rules=rules, skipped=skipped)


def yaml_parse(text: str) -> OwnersFile:
    """Rules from YAML, in order, with CODEOWNERS' pattern semantics: a mapping of pattern to
    owners (a string of space-separated owners, or a list; empty or null un-owns), or a list of
    ``{pattern: ..., owners: ...}``."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise OwnersError(f"Not YAML: {error}") from error
    if isinstance(data, dict) and set(data) == {"owners"} and isinstance(data["owners"], list):
        data = data["owners"]
    if isinstance(data, dict):
        entries = list(data.items())
    elif isinstance(data, list) and all(isinstance(e, dict) and "pattern" in e for e in data):
        entries = [(e["pattern"], e.get("owners")) for e in data]
    else:
        raise OwnersError(
            "Give a mapping of path pattern to owners, or a list of {pattern, owners}."
        )
    rules, skipped = [], []
    for number, (pattern, owners) in enumerate(entries, start=1):
        if owners is None:
            owners = []
        elif isinstance(owners, str):
            owners = owners.split()
        try:
            if not isinstance(owners, list) or not all(isinstance(o, str) for o in owners):
                raise OwnersError("Owners are a string or a list of strings.")
            rules.append(rule_make(line=number, pattern=str(pattern), owners=owners))
        except OwnersError as error:
            skipped.append(Skipped(line=number, text=f"{pattern}: {owners}", why=str(error)))
    _check_size(rules)
    return OwnersFile(rules=rules, skipped=skipped)


def owners_parse(text: str, *, name: str = "CODEOWNERS") -> OwnersFile:
    """``text`` as YAML when ``name`` ends in .yaml or .yml, else as a CODEOWNERS file."""
    if name.lower().endswith((".yaml", ".yml")):
        return yaml_parse(text)
    return codeowners_parse(text)


def is_owner(owner: str) -> bool:
    """Whether ``owner`` is spelled as CODEOWNERS names an owner: @user, @org/team, an email."""
    return len(owner) <= MAX_OWNER_CHARS and _OWNER.match(owner) is not None


def rule_make(*, line: int, pattern: str, owners: Iterable[str]) -> OwnerRule:
    """One rule, or ``OwnersError`` saying why GitHub would not take it."""
    owners = tuple(dict.fromkeys(owner.lower() for owner in owners))  # once each, in order
    bad = [owner for owner in owners if not is_owner(owner)]
    if bad:
        raise OwnersError(f"Not an owner (@user, @org/team or an email): {', '.join(bad)}")
    if len(owners) > MAX_OWNERS:
        raise OwnersError(f"At most {MAX_OWNERS} owners a rule.")
    return OwnerRule(line=line, pattern=pattern, owners=owners, regex=pattern_regex(pattern))


def pattern_regex(pattern: str) -> str:
    """The anchored regular expression over repository-relative paths (no leading ``/``) that
    a CODEOWNERS ``pattern`` stands for."""
    if not pattern or pattern.startswith("!"):
        raise OwnersError("Negation ('!') is not part of CODEOWNERS' syntax.")
    if re.search(r"(?<!\\)\[", pattern):
        raise OwnersError("Character classes ('[...]') are not part of CODEOWNERS' syntax.")
    folder = pattern.endswith("/") and not pattern.endswith("\\/")
    body = pattern.rstrip("/") if folder else pattern
    anchored = body.startswith("/") or "/" in body.lstrip("/")
    body = body.lstrip("/")
    if not body or body == "**":
        return "^.*$"  # "/" or "**": everything
    regex = ("^" if anchored else "^(?:.*/)?") + _translate(body)
    if folder:
        return regex + "/.*$"  # a folder's files, at any depth
    if body.endswith("/*") and not body.endswith("\\*"):
        return regex + "$"  # "docs/*": the folder's own files only (GitHub's exception)
    return regex + "(?:/.*)?$"  # a file, or a folder and everything under it


def owners_of(rules: list[OwnerRule], path: str, *, root: str = "") -> OwnerRule | None:
    """The rule that decides ``path``'s owners (the last that matches), or None. Its ``owners``
    may be empty: un-owned."""
    target = repository_path(path, root=root)
    if not target:
        return None  # a test with no file
    for rule in reversed(rules):
        if re.match(rule.regex, target):
            return rule
    return None


def path_normalize(path: str) -> str:
    """A test file's path as CODEOWNERS sees it: forward slashes, no repeated ``/``, no leading
    ``./`` or ``/``. The engine's SQL does the same (``parity.engine.owners``)."""
    path = re.sub("/{2,}", "/", path.replace("\\", "/"))
    return re.sub(r"^(?:\.?/)+", "", path)


def repository_path(path: str, *, root: str = "") -> str:
    """``path`` (a test's file as parity stores it) relative to the repository's root."""
    path = path_normalize(path)
    if not path:
        return ""
    root = path_normalize(root).strip("/")
    return f"{root}/{path}" if root else path


def _translate(body: str) -> str:
    out, i = [], 0
    if body.startswith("**/"):
        out.append("(?:.*/)?")
        i = 3
    while i < len(body):
        rest = body[i:]
        if rest.startswith("\\") and len(rest) > 1:
            out.append(regex_literal(rest[1]))
            i += 2
        elif rest.startswith("/**/"):
            out.append("/(?:.*/)?")
            i += 4
        elif rest == "/**":
            out.append("/.*")
            i += 3
        elif rest.startswith("**"):
            out.append("[^/]*")  # any other "**" is a "*" (gitignore)
            i += 2
        elif rest[0] == "*":
            out.append("[^/]*")
            i += 1
        elif rest[0] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(regex_literal(rest[0]))
            i += 1
    return "".join(out)


def _tokens(line: str) -> list[str]:
    """A line's whitespace-separated tokens up to an unescaped ``#`` that starts a token; a
    backslash keeps the next character (a space in a path) in its token."""
    tokens, current, escaped = [], [], False
    for char in line:
        if escaped:
            current.append("\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char.isspace():
            if current:
                tokens.append("".join(current))
                current = []
        elif char == "#" and not current:
            break  # a comment: the whole line, or after the owners
        else:
            current.append(char)
    if current:
        tokens.append("".join(current))
    return tokens


def _check_size(rules: list[OwnerRule]) -> None:
    if len(rules) > MAX_RULES:
        raise OwnersError(f"At most {MAX_RULES} rules.")
