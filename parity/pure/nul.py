"""Where a parsed JSON value (or a Python literal, a YAML document) holds a NUL character.

JSON spells one ``"\\u0000"``, Python ``'\\x00'``, YAML ``"\\0"``: each decodes to text Postgres
refuses to store in a text or jsonb column (``unsupported Unicode escape sequence``), so input
that carries one is refused where it is read, naming where, rather than failing at the write.
Every place JSON or literal input reaches the database asks this one question.

Pure: no Django.
"""

from collections.abc import Mapping

NUL = "\x00"


def nul_where(value: object, path: str = "") -> str | None:
    """The path to the first string holding a NUL in ``value`` (dict keys included), such as
    ``files[0].file`` or ``["a\\x00"]`` for a key; ``"(the value)"`` for a bare string; None when
    there is none."""
    if isinstance(value, str):
        return (path or "(the value)") if NUL in value else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and NUL in key:
                return f"{path}[{key!r}] (a key)"
            step = f"{path}.{key}" if path else str(key)
            found = nul_where(item, step)
            if found is not None:
                return found
        return None
    if isinstance(value, list | tuple | set | frozenset):
        for index, item in enumerate(value):
            found = nul_where(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def nul_message(value: object) -> str | None:
    """A sentence saying where ``value`` holds a NUL character and that it cannot be stored, or
    None when it holds none."""
    where = nul_where(value)
    if where is None:
        return None
    return f"holds a NUL character (\\u0000) at {where}, which cannot be stored; remove it."
