"""The MD5 digest a test's key is unique by (``TestCase.key_digest``, computed by Postgres)."""

try:
    # Why not hashlib: the writer hashes every case's key, and CPython's own MD5 gives the same
    # digest at about half hashlib's cost per call (it makes no OpenSSL context per hash).
    from _md5 import md5
except ImportError:  # a Python built without it
    from hashlib import md5

__all__ = ["key_digest", "md5"]


def key_digest(key: str) -> bytes:
    return md5(key.encode()).digest()
