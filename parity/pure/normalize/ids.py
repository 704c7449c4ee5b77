"""One canonical id per logical test, whatever JUnit dialect or backend reported it.

The key is ``file::Class::name`` (``Class::name`` without a file, ``file::name`` without a
class), so the same test reported by xmlrunner (``classname="TestOps" file="test/test_ops.py"``),
by pytest (``classname="test.test_ops.TestOps"``) and by ``unittest.main()`` under xmlrunner
(``classname="__main__.TestOps"`` plus the report folder ``test.test_ops``) gets one key.

Decisions, each chosen to never merge two distinct tests:

* **Files.** ``file=`` wins; otherwise the module part of a dotted classname; otherwise the
  folder hint. An absolute ``file=`` under no configured prefix is cut to the module's (or the
  hint's) repo-relative path when it ends with it. A dotted classname is only read as
  ``module.Class`` when it looks like Python: every module component an identifier, the class
  part (from the first capitalized component on) identifiers too or a name a runner generated
  from data, holding ``+``, ``-`` and ``.`` (SQLAlchemy's per-database
  ``ComponentReflectionTest_postgresql+psycopg2_15_20``), and the module part ending in a
  pytest-style test module name
  (``test_*``, ``*_test``, ``*_tests``) or starting with a ``module_paths`` key. So
  ``com.foo.BarTest`` (Java), ``test.SampleTest`` (Java), ``spec.models.article_spec`` (rspec)
  keep their dotted classname as the class, with no file. When ``file=`` names a ``.py`` file,
  the classname's leading lower-case components that spell that file are dropped; when it
  names another kind of file, the classname is never split.
* **Device variants.** PyTorch's ``instantiate_device_type_tests`` makes ``TestFooXLA`` /
  ``test_bar_xla_float32``. The suffix and the token are removed only together: the class ends
  with a configured suffix AND the name's last ``_``-separated token before an optional dtype
  tail (and before ``[params]``) is that suffix's device token. Otherwise class and name are
  both kept as they are, so ``TestAutocastTPU.test_autocast_tpu_check_dtype`` and
  ``DebuggingSpmdTest.test_single_host_replicated_tpu`` keep every word. The one merge this
  allows is the intended one; it would be wrong only if a file defined both ``TestFoo.test_x``
  and ``TestFooCPU.test_x_cpu`` as two hand-written tests.
* **Backend patterns.** A project's ``backend_pattern`` (``backend_patterns.py``) strips the
  backend a runner wrote into a classname or a name, in the same step and with the same pairing
  as the device rule: when it has a class and a name part, both must name the same backend.
* **Separators.** The key must never merge two (classname, name) pairs of one file, even for
  Rust/C++ names holding ``::``. The file and class parts (and the name when there is no class)
  are escaped so they never contain ``::`` nor end in ``:``: a ``\\`` is inserted after any
  ``:`` that is followed by ``:`` or ``\\`` or ends the part. Ordinary names never change.
  Names are otherwise kept verbatim (no case folding, no whitespace trimming).
* **Rewrites** run last, in order, on the whole key (so a pattern can see ``file::Class::``);
  the result is split back into file/class/name by the key's original shape and the key is
  rebuilt from those parts, so the two always agree. A rewrite that deletes a ``::`` leaves the
  later part empty (``f.py::TestFoo::test`` rewritten to ``f.py::test`` has no class).
"""

import posixpath
import re
from collections.abc import Mapping
from typing import NamedTuple

from parity.pure.normalize.backend_patterns import BackendPattern
from parity.pure.normalize.rules import DEFAULT_RULES, Rules

SEP = "::"

_IDENT = re.compile(r"\w+", re.ASCII)
_DOTTED_IDENTS = re.compile(r"\w+(?:\.\w+)*", re.ASCII)  # every dot-separated part an _IDENT
# Lower-case module components, then a class part a runner built from data: pytest names
# SQLAlchemy's test_suite.ComponentReflectionTest_postgresql+psycopg2_15_20 so.
_GENERATED_CLASS = re.compile(r"(?:[a-z0-9_]\w*\.)+[A-Z][\w.+-]*", re.ASCII)
_TEST_MODULE = re.compile(r"test_\w+|\w+_tests?", re.ASCII)
_NEEDS_ESCAPE = re.compile(r":(?=[:\\]|$)")
_ESCAPED = re.compile(r":\\")
_DRIVE = re.compile(r"[A-Za-z]:/")
_MAIN = "__main__"


class TestIdentity(NamedTuple):
    """Immutable; a NamedTuple because ingest builds one per <testcase>, millions per file."""

    __test__ = False  # not a pytest test class

    key: str
    file: str
    class_name: str
    name: str


def test_identity(
    *,
    classname: str,
    name: str,
    file: str | None,
    folder_hint: str | None,
    rules: Rules = DEFAULT_RULES,
) -> TestIdentity:
    """The canonical identity of one <testcase>; see the module docstring for the rules."""
    return place_new(classname or "", file, folder_hint, rules).identity(name or "")


class TestIdentifier:
    """``test_identity`` for one upload. A report repeats each (classname, file, folder hint)
    for every case of a class, so what depends on it alone is worked out once: the file and
    class, the key up to the name, and whether the class could carry a device suffix at all.
    Per case only the name is added, and the device rule runs only for classes it can apply to
    (``TestOpsXLA``, not ``TestOps``)."""

    __test__ = False
    MAX_REMEMBERED = 10_000  # a report with a distinct classname per case must not grow memory

    def __init__(self, rules: Rules = DEFAULT_RULES) -> None:
        self.rules = rules
        self._places: dict[tuple[str, str | None, str | None], _Place] = {}

    def __call__(
        self, *, classname: str, name: str, file: str | None, folder_hint: str | None
    ) -> TestIdentity:
        return self.place(classname, file, folder_hint).identity(name or "")

    @property
    def places(self) -> Mapping[tuple[str, str | None, str | None], "_Place"]:
        """The places worked out so far, by (classname, file, folder hint): a loop over many
        cases looks here before it calls ``place``."""
        return self._places

    def place(self, classname: str, file: str | None, folder_hint: str | None) -> "_Place":
        """The (file, class) of cases with these attributes, worked out once per upload."""
        where = (classname or "", file, folder_hint)
        place = self._places.get(where)
        if place is None:
            if len(self._places) >= self.MAX_REMEMBERED:
                self._places.clear()
            place = self._places[where] = place_new(*where, self.rules)
        return place


def place_new(classname: str, file: str | None, folder_hint: str | None, rules: Rules) -> "_Place":
    """The place of the cases with these attributes, the project's backend pattern applied to
    the classname as the report wrote it (``backend_patterns``)."""
    pattern = rules.backend_pattern
    if pattern is None:
        return _Place(*test_location(classname, file, folder_hint, rules), rules)
    split = pattern.split_class(classname)
    if not pattern.paired:
        # One part carries the backend: a class pattern strips every case's class here, a
        # name pattern every name in ``_Place.identity``.
        if split is not None:
            classname = split[1]
        place = _Place(*test_location(classname, file, folder_hint, rules), rules)
        if pattern.name_regex is not None:
            place.backend_pattern, place.backend_place = pattern, place
        return place
    place = _Place(*test_location(classname, file, folder_hint, rules), rules)
    if split is not None:
        # The name must carry the class's backend too before either loses it.
        place.backend_pattern, place.backend_token = pattern, split[0]
        place.backend_place = _Place(*test_location(split[1], file, folder_hint, rules), rules)
    return place


class _Place:
    """One (file, class) of an upload, and the key of its tests up to their name."""

    __slots__ = (
        "path",
        "class_name",
        "rules",
        "prefix",
        "generics",
        "generic_prefixes",
        "plain",
        "backend_pattern",
        "backend_token",
        "backend_place",
    )

    def __init__(self, path: str, class_name: str, rules: Rules) -> None:
        self.path, self.class_name, self.rules = path, class_name, rules
        # Set by ``place_new`` when a name may carry a backend: the pattern, the backend the
        # class names (None: any), and the place of the cases that lose it.
        self.backend_pattern: BackendPattern | None = None
        self.backend_token: str | None = None
        self.backend_place: _Place | None = None
        self.prefix = make_key(path, class_name, "") if class_name else ""
        self.generics = device_generics(class_name, rules)
        # Neither a device suffix to strip nor a rewrite to apply: the key is prefix + name.
        self.plain = bool(class_name) and not rules.rewrites and not self.generics
        # A device class and no rewrite: the key is the generic class's prefix + the name
        # without its device, or prefix + name when the name carries no device of the class.
        self.generic_prefixes = (
            {token: make_key(path, generic, "") for token, generic in self.generics.items()}
            if class_name and not rules.rewrites
            else None
        )

    def identity(self, name: str) -> TestIdentity:
        if self.backend_pattern is not None:
            split = self.backend_pattern.split_name(name)
            if split is not None and self.backend_token in (None, split[0]):
                return self.backend_place.located(split[1])
        return self.located(name)

    def located(self, name: str) -> TestIdentity:
        """The identity of the case ``name`` here, its backend (if any) already stripped."""
        # tuple.__new__: TestIdentity(...) without a Python-level call, once per case.
        if self.plain:
            return _tuple_new(TestIdentity, (self.prefix + name, self.path, self.class_name, name))
        if self.generic_prefixes is not None:
            split = device_split(name, self.rules, self.generics)
            if split is None:
                key, class_name = self.prefix + name, self.class_name
            else:
                token, name = split
                key, class_name = self.generic_prefixes[token] + name, self.generics[token]
            return _tuple_new(TestIdentity, (key, self.path, class_name, name))
        return _identity(self.path, self.class_name, name, self.rules, self.generics)


_tuple_new = tuple.__new__


def backend_of(
    *, classname: str, name: str, file: str | None, folder_hint: str | None, rules: Rules
) -> str | None:
    """The backend token ``test_identity`` strips from this case (the backend pattern's group,
    or a PyTorch device token), or None when it strips none: what a preview shows beside an ID."""
    classname, name = classname or "", name or ""
    place = place_new(classname, file, folder_hint, rules)
    pattern = rules.backend_pattern
    if place.backend_pattern is not None:
        split = place.backend_pattern.split_name(name)
        if split is not None and place.backend_token in (None, split[0]):
            return split[0]
    elif pattern is not None and not pattern.paired and (split := pattern.split_class(classname)):
        return split[0]
    if place.generics and (device := device_split(name, rules, place.generics)) is not None:
        return device[0]
    return None


def test_location(
    classname: str, file: str | None, folder_hint: str | None, rules: Rules
) -> tuple[str, str]:
    """(file path, class) of a case, before device suffixes are considered."""
    path = clean_path(file or "", rules)
    module, class_name = split_classname(classname, path, rules)
    module_file = module_path(module, rules) if module else ""
    if not path:
        path = module_file or hint_path(folder_hint, rules)
    elif _is_absolute(path):
        # An unconfigured checkout root: a dotted module or report folder is repo-relative.
        relative = module_file or hint_path(folder_hint, rules)
        if relative and path.endswith("/" + relative):
            path = relative
    return path, class_name


def _identity(
    path: str, class_name: str, name: str, rules: Rules, generics: dict[str, str] | None = None
) -> TestIdentity:
    class_name, name = strip_device(class_name, name, rules, generics)
    if rules.rewrites:
        return _rewritten(path, class_name, name, rules)
    return TestIdentity(make_key(path, class_name, name), path, class_name, name)


# The contract names it test_*; without this, pytest collects it wherever a test imports it.
test_identity.__test__ = False  # type: ignore[attr-defined]
test_location.__test__ = False  # type: ignore[attr-defined]


def clean_path(raw: str, rules: Rules = DEFAULT_RULES) -> str:
    """Forward slashes, no ``./`` or ``file://``, minus the longest matching path prefix."""
    path = raw.strip().replace("\\", "/").removeprefix("file://")
    if not path:
        return ""
    path = posixpath.normpath(path)
    prefixes = rules.compiled
    if prefixes.any_path_prefix is not None and prefixes.any_path_prefix.match(path):
        path = path[max(m.end() for rx in prefixes.path_prefixes if (m := rx.match(path))) :]
    return "" if path == "." else path


def split_classname(classname: str, path: str, rules: Rules) -> tuple[tuple[str, ...], str]:
    """(module components, class) of a JUnit classname; no module when it does not look like
    Python (see the module docstring)."""
    if classname == _MAIN or classname.startswith(_MAIN + "."):
        return (), classname[len(_MAIN) + 1 :]
    if not (_DOTTED_IDENTS.fullmatch(classname) or _GENERATED_CLASS.fullmatch(classname)):
        return (), classname
    parts = classname.split(".")
    count = _file_module_length(parts, path)
    if not count and (not path or path.endswith(".py")):
        count = module_length(parts, rules)
    return tuple(parts[:count]), ".".join(parts[count:])


def module_length(parts: list[str], rules: Rules) -> int:
    """How many leading components are a Python module, 0 when they do not look like one."""
    for prefix, _ in rules.compiled.module_paths:
        if tuple(parts[: len(prefix)]) == prefix:
            return _first_capitalized(parts, start=len(prefix))
    count = _first_capitalized(parts, start=0)
    return count if count and _TEST_MODULE.fullmatch(parts[count - 1]) else 0


def module_path(module: tuple[str, ...], rules: Rules) -> str:
    """``test.test_ops`` → ``test/test_ops.py``, through the longest matching module_paths key."""
    for prefix, target in rules.compiled.module_paths:
        if module[: len(prefix)] == prefix:
            rest = module[len(prefix) :]
            if not rest:
                return (target or "/".join(prefix)) + ".py"
            return "/".join([target, *rest] if target else rest) + ".py"
    return "/".join(module) + ".py"


def hint_path(hint: str | None, rules: Rules) -> str:
    """The file named by a report folder: ``test.test_ops`` (xmlrunner's argv0 with '/'→'.'),
    ``…/test.test_ops``, a path ``test/test_ops.py`` used as is, or ``test/test_ops``.
    Anything else (``cpu-shard-1``, ``results``) names no file."""
    path = clean_path(hint or "", rules)
    if not path or path.endswith(".py"):
        return path
    last = path.rsplit("/", 1)[-1]
    if not _DOTTED_IDENTS.fullmatch(last):
        return ""
    parts = last.split(".")
    if len(parts) == 1 and "/" in path and _TEST_MODULE.fullmatch(last):
        return path + ".py"
    lower = all(not part[0].isupper() for part in parts)
    if module_length(parts, rules) == len(parts) or (lower and len(parts) > 1):
        return module_path(tuple(parts), rules)
    return ""


def document_hint(folder: str | None, file_hint: str | None, rules: Rules) -> str | None:
    """The hint for one document's cases: the folder it sits in inside an archive when that
    folder names a test file (``test.test_ops``), else the upload's ``file_hint``. A client
    packs each XML into the folder it was found in (``test-reports``), which names nothing,
    so the folder alone would hide the hint the user gave."""
    return folder if folder and hint_path(folder, rules) else file_hint


def device_generics(class_name: str, rules: Rules) -> dict[str, str]:
    """The generic class of a device-specific ``class_name``, by the device token its suffix
    names (``TestFooXLA`` → ``{"xla": "TestFoo"}``; the longest suffix first); empty when no
    name of the class can lose a device suffix."""
    generics: dict[str, str] = {}
    compiled = rules.compiled
    if compiled.device_name is None or not class_name.endswith(compiled.suffix_ends):
        return generics
    for length in compiled.suffix_lengths:
        token = rules.class_suffixes.get(class_name[-length:])
        generic = class_name[:-length]
        if token is not None and generic and not generic.endswith("."):
            generics.setdefault(token, generic)
    return generics


# Where a test name's parameters start ("[shape0]", " (subtest)", "(x=1)"): after its device.
_PARAMETERS = re.compile(r"[\[ (]")


def strip_device(
    class_name: str, name: str, rules: Rules, generics: dict[str, str] | None = None
) -> tuple[str, str]:
    """Drop PyTorch's generated device suffix from class and name, only when both carry it.
    ``generics`` is ``device_generics(class_name, rules)``, for a caller that keeps it per
    class (it runs once per case of an upload)."""
    if generics is None:
        generics = device_generics(class_name, rules)
    split = device_split(name, rules, generics) if generics else None
    if split is None:
        return class_name, name
    token, name = split
    return generics[token], name


def device_split(name: str, rules: Rules, generics: dict[str, str]) -> tuple[str, str] | None:
    """(device token, the name without it) when ``name`` carries a device token of its
    class's ``generics``; None otherwise."""
    cut = _PARAMETERS.search(name)
    base, params = (name, "") if cut is None else (name[: cut.start()], name[cut.start() :])
    match = rules.compiled.device_name.fullmatch(base)
    if match is None or match["device"] not in generics:
        return None
    return match["device"], match["head"] + match["dtypes"] + params


def make_key(file: str, class_name: str, name: str) -> str:
    parts = [_escape(file)] if file else []
    parts += [_escape(class_name), name] if class_name else [_escape(name)]
    return SEP.join(parts)


def display_id(file: str, class_name: str, name: str) -> str:
    """The test's ID as people read it and paste it into a runner (``pytest 'f.py::T::t'``):
    the parts joined by ``::``, unescaped. Only the key escapes, so that it never merges two
    tests; a reader needs the test's real names."""
    return SEP.join(part for part in (file, class_name, name) if part)


def split_key(key: str, *, has_file: bool, has_class: bool) -> tuple[str, str, str]:
    """Inverse of make_key for a key of known shape; a missing separator empties that part."""
    file = class_name = ""
    rest = key
    if has_file:
        head, sep, tail = rest.partition(SEP)
        if sep:
            file, rest = _unescape(head), tail
    if has_class:
        head, sep, tail = rest.partition(SEP)
        if sep:
            return file, _unescape(head), tail
    return file, class_name, _unescape(rest)


def _rewritten(path: str, class_name: str, name: str, rules: Rules) -> TestIdentity:
    key = make_key(path, class_name, name)
    for pattern, replacement in rules.compiled.rewrites:
        key = pattern.sub(replacement, key)
    parts = split_key(key, has_file=bool(path), has_class=bool(class_name))
    return TestIdentity(make_key(*parts), *parts)


def _file_module_length(parts: list[str], path: str) -> int:
    """With file=x/y/test_z.py, the leading classname components spelling ``…y.test_z``."""
    if not path.endswith(".py"):
        return 0
    file_parts = path.removesuffix(".py").split("/")
    for count in range(len(parts), 0, -1):
        head = parts[:count]
        if file_parts[-count:] == head and not any(part[0].isupper() for part in head):
            return count
    return 0


def _first_capitalized(parts: list[str], *, start: int) -> int:
    return next((i for i in range(start, len(parts)) if parts[i][0].isupper()), len(parts))


def _is_absolute(path: str) -> bool:
    return path.startswith("/") or bool(_DRIVE.match(path))


def _escape(part: str) -> str:
    return _NEEDS_ESCAPE.sub(r":\\", part) if ":" in part else part


def _unescape(part: str) -> str:
    return _ESCAPED.sub(":", part)
