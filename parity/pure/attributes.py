"""Run attributes (what CI says a run ran on: ``arch=gfx942``, ``rocm=7.1``) and the conditions
a triage holds under (``Triage.condition``), e.g. ``arch in (gfx942, gfx90a) and rocm < 7.14``.

Grammar (``and`` binds tighter than ``or``; parentheses group)::

    condition := conjunct ("or" conjunct)*
    conjunct  := clause ("and" clause)*
    clause    := "(" condition ")" | KEY OP VALUE | KEY ["not"] "in" "(" VALUE ("," VALUE)* ")"
    OP        := "==" | "=" | "!=" | "<" | "<=" | ">" | ">="

A VALUE is a bare word (letters, digits, ``_ . + - : / *``) or a quoted string. Equality and
``in`` compare versions when both sides read as one (``7.1 == 7.1.0``), text otherwise. The
orderings compare versions only: a literal that is not a version is refused when the condition
is written, and a run whose value is not one fails the clause. A clause whose key the run lacks
is false, whatever its operator (``!=`` and ``not in`` included): a condition says what a run
must carry, so a run that says nothing matches none.

Versions order as PEP 440 does for the forms CI sends (``7.2 < 7.14``, ``6.4.1 < 7``,
``7.0 == 7``, ``7.1rc1 < 7.1``; a ``+local`` tail is ignored): read here, since pure code
imports no third-party package.
"""

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MAX_ATTRIBUTES = 20
MAX_VALUE_CHARS = 100
KEY_PATTERN = r"[a-z][a-z0-9_.-]{0,49}"
_KEY = re.compile(KEY_PATTERN)
MAX_CONDITION_CHARS = 1000


class AttributesError(ValueError):
    """Attributes a run cannot carry; the message names the key at fault."""


class ConditionError(ValueError):
    """A condition that cannot be read; ``position`` is the 0-based offset of the fault."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} (at character {position + 1})")
        self.position = position


def attributes_check(attributes: object) -> dict[str, str]:
    """``attributes`` as a run stores them: an object of at most 20 keys like ``arch`` or
    ``rocm_version`` whose values are text (numbers read as text) of at most 100 characters."""
    if not isinstance(attributes, Mapping):
        raise AttributesError('Attributes are a JSON object, e.g. {"arch": "gfx942"}.')
    if len(attributes) > MAX_ATTRIBUTES:
        raise AttributesError(f"At most {MAX_ATTRIBUTES} attributes; got {len(attributes)}.")
    checked = {}
    for key, value in attributes.items():
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise AttributesError(
                f"Attribute key {key!r}: use lowercase letters, digits, '_', '.', '-', starting "
                "with a letter, at most 50 characters."
            )
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise AttributesError(f"Attribute {key!r}: the value must be text or a number.")
        text = str(value).strip()
        if not text or len(text) > MAX_VALUE_CHARS:
            raise AttributesError(
                f"Attribute {key!r}: the value must be 1 to {MAX_VALUE_CHARS} characters."
            )
        checked[key] = text
    return checked


def attributes_changed(
    before: Mapping[str, str], after: Mapping[str, str]
) -> dict[str, list[str | None]]:
    """``{key: [before, after]}`` of each key whose value differs between two runs'
    attributes (None where a run lacks the key): empty when nothing changed."""
    if before == after:
        return {}
    keys = sorted(set(before) | set(after))
    return {
        key: [before.get(key), after.get(key)] for key in keys if before.get(key) != after.get(key)
    }


# Variants.


MAX_BACKEND_NAME = 50


def variant_attributes(attributes: Mapping[str, str], keys: Sequence[str]) -> dict[str, str]:
    """The attributes among ``keys`` (a project's variant keys) that ``attributes`` carry."""
    return {key: attributes[key] for key in keys if key in attributes}


def variant_name(
    family: str, attributes: Mapping[str, str], keys: Sequence[str], *, distinct: bool = False
) -> str | None:
    """The name of ``family``'s variant for ``attributes``: the family's name and each variant
    key's value, in ``keys``' order, as a slug (``rocm-gfx942``); None when they carry no
    variant key. A name past 50 characters keeps a hash of the whole so variants stay apart.

    Two values can make one slug (``gfx90a:xnack+`` and ``gfx90a:xnack-``; ``GFX942`` and
    ``gfx942``): ``distinct`` adds a hash of the exact values (``rocm-gfx90a-xnack-1b2c3d4e``),
    the name the second of two such variants gets."""
    values = list(variant_attributes(attributes, keys).values())
    if not values:
        return None
    name = re.sub(r"[^a-z0-9_-]+", "-", "-".join([family, *values]).lower()).strip("-")
    if distinct:
        exact = "\x1f".join([family, *values])  # a separator no slug or value holds
        digest = hashlib.sha1(exact.encode()).hexdigest()[:8]
        return f"{name[: MAX_BACKEND_NAME - 9].rstrip('-')}-{digest}"
    if len(name) > MAX_BACKEND_NAME:
        digest = hashlib.sha1(name.encode()).hexdigest()[:8]
        name = f"{name[: MAX_BACKEND_NAME - 9].rstrip('-')}-{digest}"
    return name


# Versions.

_VERSION = re.compile(
    r"v?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre>a|alpha|b|beta|c|rc|pre|preview|dev)[-_.]?(?P<pre_n>\d*))?"
    r"(?:\+[A-Za-z0-9.]+)?",
    re.IGNORECASE,
)
_PRE_RANK = {"dev": 0, "a": 1, "alpha": 1, "b": 2, "beta": 2, "c": 3, "rc": 3, "pre": 3}
_PRE_RANK["preview"] = 3


def version_key(text: str) -> tuple | None:
    """A sort key for ``text`` as a version, or None when it does not read as one."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        return None
    release = [int(part) for part in match["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    pre = (match["pre"] or "").lower()
    # A final release sorts after its pre-releases.
    stage = (_PRE_RANK[pre], int(match["pre_n"] or 0)) if pre else (9, 0)
    return (tuple(release), stage)


# Conditions.

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<op>==|!=|<=|>=|=|<|>)
      | (?P<punct>[(),])
      | "(?P<dq>[^"]*)" | '(?P<sq>[^']*)'
      | (?P<word>[A-Za-z0-9_.+\-:/*]+)
    )""",
    re.VERBOSE,
)
_ORDERINGS = ("<", "<=", ">", ">=")


@dataclass(frozen=True)
class _Token:
    kind: str  # op, punct, text (quoted), word
    text: str
    position: int


@dataclass(frozen=True)
class Clause:
    key: str
    op: str  # ==, !=, <, <=, >, >=, in, not in
    values: tuple[str, ...]

    def holds(self, attributes: Mapping[str, str]) -> bool:
        if self.key not in attributes:
            return False
        have = str(attributes[self.key])
        if self.op in _ORDERINGS:
            mine, theirs = version_key(have), version_key(self.values[0])
            if mine is None or theirs is None:
                return False
            return {"<": mine < theirs, "<=": mine <= theirs, ">": mine > theirs}.get(
                self.op, mine >= theirs
            )
        equal = any(_equal(have, value) for value in self.values)
        return equal if self.op in ("==", "in") else not equal


def _equal(have: str, value: str) -> bool:
    mine, theirs = version_key(have), version_key(value)
    if mine is not None and theirs is not None:
        return mine == theirs
    return have == value


@dataclass(frozen=True)
class Condition:
    """Clauses in disjunctive form: it holds when every clause of some conjunct holds."""

    conjuncts: tuple[tuple["Clause | Condition", ...], ...]

    def holds(self, attributes: Mapping[str, str]) -> bool:
        return any(all(part.holds(attributes) for part in c) for c in self.conjuncts)

    def keys(self) -> set[str]:
        return {
            key
            for conjunct in self.conjuncts
            for part in conjunct
            for key in ({part.key} if isinstance(part, Clause) else part.keys())
        }


def condition_parse(text: str) -> Condition:
    """The condition ``text`` states; ``ConditionError`` names the position of a fault."""
    if len(text) > MAX_CONDITION_CHARS:
        raise ConditionError(f"A condition is at most {MAX_CONDITION_CHARS} characters", 0)
    parser = _Parser(_tokens(text), len(text))
    condition = parser.condition()
    parser.end()
    return condition


def condition_holds(text: str, attributes: Mapping[str, str]) -> bool:
    """Whether ``attributes`` satisfy condition ``text``; an empty condition always holds."""
    return not text.strip() or condition_parse(text).holds(attributes)


def condition_applies(text: str, attributes: Mapping[str, str]) -> bool:
    """Whether a triage conditioned on ``text`` applies for ``attributes``: where the condition
    holds, and where it cannot be read (written around the triage services, a raw edit):
    applying it loses nothing, where dropping it would open untracked gaps nobody can explain."""
    try:
        return condition_holds(text, attributes)
    except ConditionError:
        return True


def _tokens(text: str) -> list[_Token]:
    tokens, position = [], 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None:
            start = len(text) - len(text[position:].lstrip())
            raise ConditionError(f"Unexpected character {text[start]!r}", start)
        kind = match.lastgroup
        start = match.start(kind)
        value = match[kind]
        if kind in ("dq", "sq"):
            kind = "text"
        tokens.append(_Token(kind, value, start))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[_Token], length: int) -> None:
        self.tokens = tokens
        self.at = 0
        self.length = length

    def peek(self) -> _Token | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> _Token:
        token = self.peek()
        if token is None:
            raise ConditionError("The condition ends too early", self.length)
        self.at += 1
        return token

    def is_word(self, word: str) -> bool:
        token = self.peek()
        return token is not None and token.kind == "word" and token.text.lower() == word

    def expect_punct(self, punct: str) -> None:
        token = self.take()
        if token.kind != "punct" or token.text != punct:
            raise ConditionError(f"Expected {punct!r}, found {token.text!r}", token.position)

    def end(self) -> None:
        token = self.peek()
        if token is not None:
            raise ConditionError(
                f"Expected 'and', 'or' or the end, found {token.text!r}", token.position
            )

    def condition(self) -> Condition:
        conjuncts = [self.conjunct()]
        while self.is_word("or"):
            self.take()
            conjuncts.append(self.conjunct())
        return Condition(tuple(conjuncts))

    def conjunct(self) -> tuple["Clause | Condition", ...]:
        parts = [self.clause()]
        while self.is_word("and"):
            self.take()
            parts.append(self.clause())
        return tuple(parts)

    def clause(self) -> "Clause | Condition":
        token = self.take()
        if token.kind == "punct" and token.text == "(":
            inner = self.condition()
            self.expect_punct(")")
            return inner
        if token.kind != "word" or not _KEY.fullmatch(token.text):
            raise ConditionError(
                f"Expected an attribute name (like arch or rocm), found {token.text!r}",
                token.position,
            )
        key = token.text
        if self.is_word("not") or self.is_word("in"):
            return Clause(key, self.membership(), self.value_list())
        op = self.take()
        if op.kind != "op":
            raise ConditionError(
                f"Expected an operator (==, !=, <, <=, >, >=, in, not in) after {key!r}, "
                f"found {op.text!r}",
                op.position,
            )
        value = self.value()
        if op.text in _ORDERINGS and version_key(value.text) is None:
            raise ConditionError(
                f"{key} {op.text} {value.text}: ordering compares versions (like 7.14 or "
                f"6.4.1), and {value.text!r} is not one",
                value.position,
            )
        return Clause(key, "==" if op.text == "=" else op.text, (value.text,))

    def membership(self) -> str:
        negated = self.is_word("not")
        if negated:
            self.take()
        token = self.take()
        if token.kind != "word" or token.text.lower() != "in":
            raise ConditionError(f"Expected 'in', found {token.text!r}", token.position)
        return "not in" if negated else "in"

    def value_list(self) -> tuple[str, ...]:
        self.expect_punct("(")
        values = [self.value().text]
        while True:
            token = self.take()
            if token.kind == "punct" and token.text == ")":
                return tuple(values)
            if token.kind != "punct" or token.text != ",":
                raise ConditionError(f"Expected ',' or ')', found {token.text!r}", token.position)
            values.append(self.value().text)

    def value(self) -> _Token:
        token = self.take()
        if token.kind not in ("word", "text"):
            raise ConditionError(f"Expected a value, found {token.text!r}", token.position)
        return token
