"""Skip-reason classification rules: an ordered list of rules, each a regular expression on a
skip's message, file, class or test name, giving a category and a disposition; the first rule
that matches wins. Pure: strings and plain data in and out (the rules a project keeps, and the
classification of its reasons, are ``parity.services.classification``'s).

The YAML (or JSON) a project imports, and the default set (``skip_rules.yaml`` beside this
module, written from PyTorch/XLA's skip messages)::

    categories:                         # optional: each category's disposition, said once
      not on this hardware: intended
    rules:
      - category: not on this hardware
        message: 'only (works|runs) on tpu'   # re.search, case-insensitive
      - category: needs more devices
        disposition: infra              # or here, per rule (it wins over ``categories``)
        message:                        # a list: any of its patterns
          - 'multiple devices'
          - 'at least \\d+ devices'
      - category: not on this hardware
        file: '^test/test_pallas'       # file, class, name: the test's canonical parts
        note: Pallas kernels are TPU only

Every condition a rule gives must match (a rule gives at least one); a condition on a part
the caller does not know (a reason alone has a message and no file) does not match. A skip
that gave no reason (an empty message) is "no reason given", before any rule: ingest keeps no
reason row for it, so every page counts it alike whatever the rules say.

The version of a rule set is a digest of its rules in order: any change to a rule, or to the
order, changes it, and whatever was classified records the version it was classified with.
"""

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path

import yaml

# What a category asks of the team. Few on purpose: each one is a different next step.
DISPOSITIONS = {
    "intended": "by design: the test does not apply to this backend; nothing to fix",
    "needs_work": "the backend (or the test) lacks something: work to schedule",
    "infra": "the test could run with other CI: more devices, memory, a package or a setting",
    "unknown": "nobody has said why: triage it first",
}
# How pages name each disposition: "intended" reads "by design", since an intended gap (an
# exemption's kind) is another thing, shown on the same pages.
DISPOSITION_NAMES = {
    "intended": "by design",
    "needs_work": "needs work",
    "infra": "infra",
    "unknown": "unknown",
}
CONDITIONS = ("message", "file", "class", "name")
DEFAULT_RULES_PATH = Path(__file__).with_name("skip_rules.yaml")


class SkipRulesError(ValueError):
    """Rules that cannot be used; the message names the rule and field at fault."""


@dataclass(frozen=True)
class SkipRule:
    category: str
    disposition: str
    message: str = ""
    file: str = ""
    klass: str = ""  # "class" in files and the admin
    name: str = ""
    note: str = ""

    def conditions(self) -> dict[str, str]:
        """The conditions this rule gives, by the part of a test they read."""
        given = {"message": self.message, "file": self.file, "class": self.klass}
        given["name"] = self.name
        return {part: pattern for part, pattern in given.items() if pattern}


@dataclass(frozen=True)
class Classification:
    category: str  # "" when no rule matched: uncategorized
    disposition: str  # "unknown" when no rule matched
    rule: int | None  # the index of the rule that matched


UNCATEGORIZED = Classification(category="", disposition="unknown", rule=None)
NO_REASON = Classification(category="no reason given", disposition="unknown", rule=None)


class SkipRules:
    """An ordered rule set, compiled once."""

    def __init__(self, rules: list[SkipRule]):
        self.rules = list(rules)
        for index, rule in enumerate(self.rules):
            _check(rule, index)
        self._compiled = [
            {part: _compile(pattern, index, part) for part, pattern in rule.conditions().items()}
            for index, rule in enumerate(self.rules)
        ]

    @cached_property
    def version(self) -> str:
        """A digest of the rules in order: it changes whenever a rule or the order does."""
        data = json.dumps([asdict(rule) for rule in self.rules], sort_keys=True)
        return hashlib.sha256(data.encode("utf-8")).hexdigest()[:12]

    def classify(
        self,
        *,
        message: str | None = None,
        file: str | None = None,
        klass: str | None = None,
        name: str | None = None,
    ) -> Classification:
        """The first rule whose every condition matches the parts given (a part None: not
        known); an empty message: ``NO_REASON``."""
        if message is not None and not message.strip():
            return NO_REASON
        parts = {"message": message, "file": file, "class": klass, "name": name}
        for index, compiled in enumerate(self._compiled):
            if all(
                parts[part] is not None and pattern.search(parts[part])
                for part, pattern in compiled.items()
            ):
                rule = self.rules[index]
                return Classification(rule.category, rule.disposition, index)
        return UNCATEGORIZED


def skip_rules_parse(text: str) -> SkipRules:
    """Rules from YAML (JSON is YAML) text; ``SkipRulesError`` saying what is wrong."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SkipRulesError(f"not YAML: {exc}") from exc
    return skip_rules_from_data(data)


def skip_rules_from_data(data: object) -> SkipRules:
    """Rules from parsed YAML: a mapping with ``rules`` (and optional ``categories``), or a
    bare list of rules."""
    if isinstance(data, list):
        data = {"rules": data}
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        raise SkipRulesError("expected a mapping with a list of 'rules'")
    categories = data.get("categories") or {}
    if not isinstance(categories, dict):
        raise SkipRulesError("'categories' must map each category to its disposition")
    return SkipRules([_rule(entry, index, categories) for index, entry in enumerate(data["rules"])])


def skip_rules_default() -> SkipRules:
    """The rule set a new project starts with."""
    return skip_rules_parse(DEFAULT_RULES_PATH.read_text(encoding="utf-8"))


def skip_rules_dump(rules: SkipRules) -> str:
    """The rules as YAML that ``skip_rules_parse`` reads back to the same version."""
    entries = []
    for rule in rules.rules:
        entry = {"category": rule.category, "disposition": rule.disposition}
        entry.update(rule.conditions())
        if rule.note:
            entry["note"] = rule.note
        entries.append(entry)
    return yaml.safe_dump({"rules": entries}, sort_keys=False, allow_unicode=True, width=100)


_FIELDS = {"category", "disposition", "note", *CONDITIONS}


def _rule(entry: object, index: int, categories: dict) -> SkipRule:
    where = f"rule {index + 1}"
    if not isinstance(entry, dict):
        raise SkipRulesError(f"{where}: expected a mapping")
    unknown = sorted(set(entry) - _FIELDS)
    if unknown:
        raise SkipRulesError(f"{where}: unknown field {unknown[0]!r}")
    values = {key: _text(value) for key, value in entry.items()}
    category = values.get("category", "").strip()
    disposition = values.get("disposition") or str(categories.get(category) or "")
    return SkipRule(
        category=category,
        disposition=disposition.strip(),
        message=values.get("message", ""),
        file=values.get("file", ""),
        klass=values.get("class", ""),
        name=values.get("name", ""),
        note=values.get("note", "").strip(),
    )


def _text(value: object) -> str:
    """A field's text; a list of patterns is one pattern, any of them (a long pattern reads
    better one alternative a line)."""
    if value is None:
        return ""
    if isinstance(value, list):
        return "|".join(f"(?:{item})" for item in value)
    return str(value)


def _check(rule: SkipRule, index: int) -> None:
    where = f"rule {index + 1}"
    if not rule.category:
        raise SkipRulesError(f"{where}: needs a category")
    if len(rule.category) > 60:
        raise SkipRulesError(f"{where}: a category is at most 60 characters")
    if rule.disposition not in DISPOSITIONS:
        choices = ", ".join(DISPOSITIONS)
        raise SkipRulesError(f"{where}: disposition must be one of {choices}")
    if not rule.conditions():
        raise SkipRulesError(f"{where}: needs a message, file, class or name pattern")


def _compile(pattern: str, index: int, part: str) -> re.Pattern:
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        message = f"rule {index + 1}: {part} is not a regular expression: {exc}"
        raise SkipRulesError(message) from exc
