"""PyTorch core's ``set_test_configs(...)`` call, by which an out-of-tree backend declares the
upstream tests it does not run (``docs/source/accelerator/testing.md`` in pytorch/pytorch)::

    PrivateUse1TestBase.set_test_configs(
        test_exclusions={
            "TestCUDAGraphs": "*",                                        # a whole class
            "TestTensorIndexing": ["test_index_put"],                     # methods
            "TestDtypeAware": {"test_dtype_filter": {"dtypes": [torch.float32]}},  # dtypes
        },
        op_allowlist=("add.Tensor", "sub.Tensor"),
        op_overrides={"add.Tensor": [DecorateInfo(...)]},
    )

The file is parsed, never run: keyword values must be literals (``torch.float32`` reads as its
dotted name), or a name a module-level assignment gives a literal. Excluded tests produce no
test variants, so they never reach a report: each exclusion is a not-applicable declaration.
Names are the generic ones (no device or dtype tail), so a class becomes ``**::Class::*``, a
method ``**::Class::method*`` (its dtype, op and parameter variants; a sibling method whose name
starts with it too, which the import's report shows), a dtype ``**::Class::method*float32*``.

``op_allowlist`` and ``op_overrides`` become no entry: a test ID does not say which op an
``@ops`` variant runs (an allowlist names what runs, not which tests do not), and overrides
change how tests run, not whether. Both are reported.

Writing gives one call with ``test_exclusions`` (classes, then methods, in the order read).

Pure: no Django.
"""

import ast
import re
from dataclasses import dataclass

from parity.pure.list_formats.entries import (
    NOT_APPLICABLE,
    ListEntry,
    ListFormatError,
    ListRead,
    Unread,
    Written,
    ordered,
)

CALL = "set_test_configs"
DEFAULT_TARGET = "PrivateUse1TestBase.set_test_configs"
_NAME = re.compile(r"^[A-Za-z_]\w*$")


@dataclass(frozen=True)
class Dotted:
    """A dotted name in a literal (``torch.float32``): kept as written, never looked up."""

    name: str


class _NotLiteral(ValueError):
    def __init__(self, node: ast.AST) -> None:
        super().__init__(f"line {node.lineno}: '{ast.unparse(node)[:60]}' is not a literal")


def read(text: str, *, source_name: str = "", backends: tuple[str, ...] = ()) -> ListRead:
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        raise ListFormatError(f"Not Python: {where}{exc.msg}.") from None
    calls = [node for node in ast.walk(tree) if _is_call(node)]
    if not calls:
        raise ListFormatError(f"No {CALL}(...) call in the file.")
    assigned = _module_assignments(tree)
    read = ListRead()
    for number, call in enumerate(calls):
        for keyword in call.keywords:
            _keyword(read, call, number, keyword, assigned, source_name, backends)
    return read


def _keyword(read, call, number, keyword, assigned, source_name, backends) -> None:
    where = f"line {keyword.value.lineno}: {keyword.arg}"
    if keyword.arg in ("op_allowlist", "op_overrides"):
        why = (
            "a test ID does not say which op an @ops variant runs"
            if keyword.arg == "op_allowlist"
            else "it changes how tests run, not whether they run"
        )
        read.unread.append(Unread(where, f"not imported: {why}"))
        return
    if keyword.arg != "test_exclusions":
        read.unread.append(Unread(where, "not a setting parity reads"))
        return
    try:
        exclusions = _literal(keyword.value, assigned)
    except _NotLiteral as exc:
        read.unread.append(Unread(where, str(exc)))
        return
    if not isinstance(exclusions, dict):
        read.unread.append(Unread(where, "expected a dict of test classes"))
        return
    note = f"Excluded by {CALL} in {source_name}" if source_name else f"Excluded by {CALL}"
    target = ast.unparse(call.func)
    for position, (cls, value) in enumerate(exclusions.items()):
        for entry in _class_entries(cls, value, f"{where}: '{cls}'"):
            if isinstance(entry, Unread):
                read.unread.append(entry)
                continue
            extra = {**entry.extra, "order": [number, position, *entry.extra["order"]]}
            if target != DEFAULT_TARGET:
                extra["call"] = target
            read.entries.append(
                ListEntry(
                    match=entry.match,
                    kind=NOT_APPLICABLE,
                    backends=backends,
                    reason=note,
                    extra=extra,
                    where=entry.where,
                )
            )


def _class_entries(cls: object, value: object, where: str):
    if not isinstance(cls, str) or not _NAME.match(cls):
        yield Unread(where, "a class is named by a plain identifier")
        return
    if value == "*":
        yield ListEntry(f"**::{cls}::*", NOT_APPLICABLE, extra=_extra(cls), where=where)
        return
    if isinstance(value, list | tuple | set):
        for index, method in enumerate(value):
            yield _method_entry(cls, method, None, index, f"{where}: '{method}'")
        return
    if isinstance(value, dict):
        for index, (method, spec) in enumerate(value.items()):
            dtypes = spec.get("dtypes") if isinstance(spec, dict) else None
            if set(spec if isinstance(spec, dict) else ()) != {"dtypes"} or not isinstance(
                dtypes, list | tuple
            ):
                yield Unread(f"{where}: '{method}'", "expected {'dtypes': [...]}")
                continue
            for dtype_index, dtype in enumerate(dtypes):
                yield _method_entry(cls, method, dtype, (index, dtype_index), f"{where}")
        return
    yield Unread(where, "expected '*', a list of methods or {method: {'dtypes': [...]}}")


def _method_entry(cls: str, method: object, dtype: object, index, where: str):
    if not isinstance(method, str) or not _NAME.match(method):
        return Unread(where, "a method is named by a plain identifier")
    order = list(index) if isinstance(index, tuple) else [index]
    if dtype is None:
        return ListEntry(
            f"**::{cls}::{method}*",
            NOT_APPLICABLE,
            extra=_extra(cls, method=method, order=order),
            where=where,
        )
    if not isinstance(dtype, Dotted):
        return Unread(f"{where}: '{method}'", "a dtype is named as torch.<dtype>")
    short = dtype.name.rpartition(".")[2]
    return ListEntry(
        f"**::{cls}::{method}*{short}*",
        NOT_APPLICABLE,
        extra=_extra(cls, method=method, dtype=dtype.name, order=order),
        where=f"{where}: '{method}' {dtype.name}",
    )


def _extra(cls: str, *, method: str = "", dtype: str = "", order=None) -> dict:
    extra: dict = {"class": cls, "order": order or []}
    if method:
        extra["method"] = method
    if dtype:
        extra["dtype"] = dtype
    return extra


def _is_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == CALL


def _module_assignments(tree: ast.Module) -> dict[str, ast.AST]:
    """Module-level ``NAME = value``, so ``test_exclusions=EXCLUSIONS`` can be read."""
    assigned: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            if isinstance(node.targets[0], ast.Name):
                assigned[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            assigned[node.target.id] = node.value
    return assigned


def _literal(node: ast.AST, assigned: dict[str, ast.AST], depth: int = 0):
    """``ast.literal_eval`` with dotted names kept as ``Dotted`` and module names followed."""
    if depth > 50:
        raise _NotLiteral(node)
    again = lambda child: _literal(child, assigned, depth + 1)  # noqa: E731
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        values = [again(child) for child in node.elts]
        return tuple(values) if isinstance(node, ast.Tuple) else values
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise _NotLiteral(node)
        return {again(k): again(v) for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.Attribute):
        return Dotted(ast.unparse(node))
    if isinstance(node, ast.Name) and node.id in assigned:
        return again(assigned[node.id])
    raise _NotLiteral(node)


def write(entries: list[ListEntry]) -> Written:
    """One ``set_test_configs(test_exclusions=...)`` call holding ``entries``."""
    classes: dict[str, object] = {}
    skipped: list[Unread] = []
    target = DEFAULT_TARGET
    for entry in ordered(entries):
        spelled = _spelled(entry)
        if spelled is None:
            skipped.append(Unread(entry.match, "not a class, a method or a method's dtype"))
            continue
        cls, method, dtype = spelled
        target = entry.extra.get("call", target)
        if method is None:
            classes[cls] = "*"
        elif classes.get(cls) == "*":
            skipped.append(Unread(entry.match, f"'{cls}' is excluded whole already"))
        elif dtype is None:
            methods = classes.setdefault(cls, [])
            _add_method(methods, method, entry, skipped)
        else:
            methods = classes.setdefault(cls, {})
            if not isinstance(methods, dict):
                skipped.append(Unread(entry.match, f"'{cls}' lists methods without dtypes"))
                continue
            methods.setdefault(method, []).append(dtype)
    return Written(_block(target, classes), skipped)


def _add_method(methods, method: str, entry: ListEntry, skipped: list[Unread]) -> None:
    if not isinstance(methods, list):
        skipped.append(Unread(entry.match, "its class lists dtypes: add the method there"))
    elif method not in methods:
        methods.append(method)


def _spelled(entry: ListEntry) -> tuple[str, str | None, str | None] | None:
    """(class, method or None for the class, dtype or None) of an entry."""
    extra = entry.extra
    if "class" in extra:
        return extra["class"], extra.get("method"), extra.get("dtype")
    parts = entry.match.removeprefix("**::").split("::")
    if len(parts) != 2 or not _NAME.match(parts[0]):
        return None
    cls, rest = parts
    if rest == "*":
        return cls, None, None
    if rest.endswith("*") and _NAME.match(rest[:-1]):
        return cls, rest[:-1], None
    if _NAME.match(rest):
        return cls, rest, None
    return None


def _block(target: str, classes: dict[str, object]) -> str:
    lines = [f"{target}(", "    test_exclusions={"]
    for cls, value in classes.items():
        if value == "*":
            lines.append(f'        "{cls}": "*",')
        elif isinstance(value, list):
            lines.append(f'        "{cls}": [')
            lines += [f'            "{method}",' for method in value]
            lines.append("        ],")
        else:
            lines.append(f'        "{cls}": {{')
            for method, dtypes in value.items():
                listed = ", ".join(dtypes)
                lines.append(f'            "{method}": {{"dtypes": [{listed}]}},')
            lines.append("        },")
    lines += ["    },", ")", ""]
    return "\n".join(lines)
