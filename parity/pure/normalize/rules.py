"""Per-project normalization rules: which words are devices, which paths to strip, which rewrites.

Rules arrive as JSON/YAML-loaded data (a project's settings). ``validate_rules`` turns that data
into a frozen ``Rules`` or raises ``RulesError`` with a sentence naming the bad field, so an admin
form can show it; ``rules_from_dict`` is the same check used by the ingest path.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from parity.pure.normalize.backend_patterns import (
    BackendPattern,
    BackendPatternError,
    backend_pattern_parse,
)

# str(dtype).split(".")[1] for every torch dtype: PyTorch appends these after the device token
# when it instantiates device-type tests (test_foo_xla_float32, test_foo_cpu_float32_int64).
TORCH_DTYPES: tuple[str, ...] = (
    "float64", "float32", "float16", "bfloat16",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
    "float4_e2m1fn_x2",
    "complex128", "complex64", "complex32",
    "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8",
    "int1", "int2", "int3", "int4", "int5", "int6", "int7",
    "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7",
    "bool", "qint8", "quint8", "qint32", "quint4x2", "quint2x4",
    "bits8", "bits16", "bits1x8", "bits2x4", "bits4x2",
)  # fmt: skip


@dataclass(frozen=True)
class Rewrite:
    """A regex substitution applied with ``re.sub`` to the canonical test key, after all else."""

    pattern: str
    replacement: str


@dataclass(frozen=True)
class _Compiled:
    """Regexes built once per Rules, so per-testcase work is matching only."""

    path_prefixes: tuple[re.Pattern[str], ...]
    # Any of them matches: most paths are already relative, and one match tells so.
    any_path_prefix: re.Pattern[str] | None
    device_name: re.Pattern[str] | None
    suffixes: tuple[tuple[str, str], ...]  # (class suffix, device token), longest suffix first
    suffix_ends: tuple[str, ...]  # the suffixes, for one str.endswith before looking closer
    suffix_lengths: tuple[int, ...]  # their lengths, longest first: a class's tails to look up
    module_paths: tuple[tuple[tuple[str, ...], str], ...]  # longest dotted prefix first
    rewrites: tuple[tuple[re.Pattern[str], str], ...]


@dataclass(frozen=True)
class Rules:
    """How one project's test ids are normalized. Treat the dicts as read-only: the regexes
    derived from them are compiled when the Rules is built."""

    device_tokens: tuple[str, ...]
    class_suffixes: dict[str, str]
    path_prefixes: tuple[str, ...]
    module_paths: dict[str, str]
    rewrites: tuple[Rewrite, ...]
    # Where the runner writes the backend into a classname or a name (``backend_patterns``).
    backend_pattern: BackendPattern | None = None
    compiled: _Compiled = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", _compile(self))


def _compile(rules: Rules) -> _Compiled:
    prefixes = tuple(_prefix_regex(prefix) for prefix in rules.path_prefixes)
    suffixes = tuple(sorted(rules.class_suffixes.items(), key=lambda kv: -len(kv[0])))
    return _Compiled(
        path_prefixes=prefixes,
        any_path_prefix=(
            re.compile("|".join(f"(?:{rx.pattern})" for rx in prefixes)) if prefixes else None
        ),
        device_name=_device_name_regex(rules.device_tokens),
        suffixes=suffixes,
        suffix_ends=tuple(suffix for suffix, _ in suffixes),
        suffix_lengths=tuple(sorted({len(suffix) for suffix, _ in suffixes}, reverse=True)),
        module_paths=tuple(
            sorted(
                ((tuple(module.split(".")), path) for module, path in rules.module_paths.items()),
                key=lambda item: -len(item[0]),
            )
        ),
        rewrites=tuple((re.compile(r.pattern), r.replacement) for r in rules.rewrites),
    )


def _prefix_regex(prefix: str) -> re.Pattern[str]:
    """'*' is one path segment. A prefix not ending in '/' must end at a segment boundary, so
    '/workspace' does not eat the '/workspace2/' directory."""
    body = re.escape(prefix.replace("\\", "/")).replace(r"\*", "[^/]+")
    return re.compile(body if prefix.endswith(("/", "\\")) else body + "(?:/|$)")


def _device_name_regex(tokens: tuple[str, ...]) -> re.Pattern[str] | None:
    """head _device (_dtype)*: the device token is the last token before the dtype tail."""
    if not tokens:
        return None
    devices = "|".join(sorted(map(re.escape, tokens), key=len, reverse=True))
    dtypes = "|".join(sorted(TORCH_DTYPES, key=len, reverse=True))
    return re.compile(rf"(?P<head>.+)_(?P<device>{devices})(?P<dtypes>(?:_(?:{dtypes}))*)", re.S)


class RulesError(ValueError):
    """Rules data that cannot be used; str() is a user-facing sentence, ``field`` names the
    offending field (``rewrites[2].pattern``)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field


_DEVICES = ("cpu", "cuda", "xla", "mps", "meta", "lazy", "xpu", "hpu", "tpu", "neuron")

DEFAULT_RULES = Rules(
    # privateuse1 is what PyTorch's PrivateUse1TestBase names itself before a backend renames it.
    device_tokens=(*_DEVICES, "privateuseone", "privateuse1"),
    class_suffixes={
        **{token.upper(): token for token in _DEVICES},
        "PRIVATEUSEONE": "privateuseone",
        "PRIVATEUSE1": "privateuse1",
    },
    # '*' is one path segment. Checkout roots of GitHub Actions (host and container jobs, Linux
    # and Windows), GitLab CI, PyTorch's CI image and the usual Docker workdirs.
    path_prefixes=(
        "/home/runner/work/*/*/",
        "/__w/*/*/",
        "C:/a/*/*/",
        "D:/a/*/*/",
        "/github/workspace/",
        "/builds/*/*/",
        "/var/lib/jenkins/workspace/",
        "/workspace/",
    ),
    # Empty: the classname heuristics in ids.py already map test.test_ops.TestOps; a project adds
    # entries only to force a mapping the heuristics refuse (see ids.py).
    module_paths={},
    rewrites=(),
)

_FIELDS = (
    "device_tokens",
    "class_suffixes",
    "path_prefixes",
    "module_paths",
    "rewrites",
    "backend_pattern",
)
_TOKEN = re.compile(r"[a-z0-9]+")  # a device word is one '_'-separated token of a test name
_SUFFIX = re.compile(r"[A-Za-z0-9]+")
_DOTTED = re.compile(r"\w+(?:\.\w+)*", re.ASCII)


def validate_rules(data: Mapping) -> Rules:
    """Check JSON/YAML-loaded rules and build them; missing top-level keys take the defaults."""
    if not isinstance(data, Mapping):
        raise RulesError("rules", f"expected a mapping, got {type(data).__name__}")
    unknown = sorted(str(key) for key in data if key not in _FIELDS)
    if unknown:
        raise RulesError(unknown[0], f"unknown key (expected one of: {', '.join(_FIELDS)})")
    base = rules_to_dict(DEFAULT_RULES)
    merged = {name: data[name] if name in data else base[name] for name in _FIELDS}
    tokens = _tokens(merged["device_tokens"])
    return Rules(
        device_tokens=tokens,
        class_suffixes=_suffixes(merged["class_suffixes"], tokens),
        path_prefixes=_prefixes(merged["path_prefixes"]),
        module_paths=_module_paths(merged["module_paths"]),
        rewrites=_rewrites(merged["rewrites"]),
        backend_pattern=_backend_pattern(merged["backend_pattern"]),
    )


def rules_from_dict(data: Mapping) -> Rules:
    """Rules from a project's stored data (``{}`` gives the defaults). Raises RulesError."""
    return validate_rules(data)


def rules_to_dict(rules: Rules) -> dict[str, Any]:
    """JSON-ready data that ``rules_from_dict`` turns back into equal Rules."""
    return {
        "device_tokens": list(rules.device_tokens),
        "class_suffixes": dict(rules.class_suffixes),
        "path_prefixes": list(rules.path_prefixes),
        "module_paths": dict(rules.module_paths),
        "rewrites": [{"pattern": r.pattern, "replacement": r.replacement} for r in rules.rewrites],
        "backend_pattern": rules.backend_pattern.to_data() if rules.backend_pattern else {},
    }


def _str_list(value: object, name: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise RulesError(name, f"expected a list of strings, got {type(value).__name__}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise RulesError(f"{name}[{index}]", f"expected a string, got {type(item).__name__}")
    return list(value)


def _str_map(value: object, name: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise RulesError(name, f"expected a mapping of strings, got {type(value).__name__}")
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str):
            raise RulesError(f"{name}[{key!r}]", "keys and values must be strings")
    return dict(value)


def _tokens(value: object) -> tuple[str, ...]:
    tokens = _str_list(value, "device_tokens")
    for index, token in enumerate(tokens):
        if not _TOKEN.fullmatch(token):
            raise RulesError(
                f"device_tokens[{index}]",
                f"{token!r} must be lower-case letters and digits (one '_'-separated word)",
            )
    return tuple(tokens)


def _suffixes(value: object, tokens: tuple[str, ...]) -> dict[str, str]:
    suffixes = _str_map(value, "class_suffixes")
    for suffix, token in suffixes.items():
        where = f"class_suffixes[{suffix!r}]"
        if not _SUFFIX.fullmatch(suffix):
            raise RulesError(where, "a class suffix must be letters and digits")
        if token not in tokens:
            raise RulesError(where, f"device token {token!r} is not in device_tokens")
    return suffixes


def _prefixes(value: object) -> tuple[str, ...]:
    prefixes = _str_list(value, "path_prefixes")
    for index, prefix in enumerate(prefixes):
        if not prefix.strip() or prefix.strip("/*") == "":
            raise RulesError(f"path_prefixes[{index}]", f"{prefix!r} would strip every path")
    return tuple(prefixes)


def _module_paths(value: object) -> dict[str, str]:
    paths = _str_map(value, "module_paths")
    for module in paths:
        if not _DOTTED.fullmatch(module):
            raise RulesError(f"module_paths[{module!r}]", "key must be a dotted module name")
    return {module: path.replace("\\", "/").strip("/") for module, path in paths.items()}


def _rewrites(value: object) -> tuple[Rewrite, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise RulesError("rewrites", f"expected a list, got {type(value).__name__}")
    return tuple(_rewrite(item, f"rewrites[{index}]") for index, item in enumerate(value))


def _rewrite(item: object, where: str) -> Rewrite:
    if isinstance(item, Rewrite):
        item = {"pattern": item.pattern, "replacement": item.replacement}
    if not isinstance(item, Mapping):
        raise RulesError(where, "expected a mapping with 'pattern' and 'replacement'")
    extra = sorted(str(key) for key in item if key not in ("pattern", "replacement"))
    if extra:
        raise RulesError(f"{where}.{extra[0]}", "unknown key (expected pattern, replacement)")
    pattern, replacement = item.get("pattern"), item.get("replacement", "")
    if not isinstance(pattern, str) or not pattern:
        raise RulesError(f"{where}.pattern", "expected a non-empty regular expression")
    if not isinstance(replacement, str):
        raise RulesError(f"{where}.replacement", "expected a string")
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise RulesError(
            f"{where}.pattern", f"invalid regular expression {pattern!r}: {exc}"
        ) from exc
    try:
        compiled.sub(replacement, "")  # parses the template: a bad \3 or \g<x> fails here
    except (re.error, IndexError) as exc:
        raise RulesError(
            f"{where}.replacement", f"invalid replacement {replacement!r}: {exc}"
        ) from exc
    return Rewrite(pattern=pattern, replacement=replacement)


def _backend_pattern(value: object) -> BackendPattern | None:
    try:
        return backend_pattern_parse(value)
    except BackendPatternError as exc:
        where = f"backend_pattern.{exc.part}" if exc.part else "backend_pattern"
        raise RulesError(where, str(exc)) from exc
