"""The MD5 digest a test's key is unique by (``TestCase.key_digest``, computed by Postgres)."""

try:
    # CPython's own MD5 gives the same digest as hashlib's OpenSSL one at half the cost per call
    # (no OpenSSL context per hash), and the writer hashes every case's key.
    from _md5 import md5
except ImportError:  # a Python built without it
    from hashlib import md5

__all__ = ["key_digest", "md5"]


def key_digest(key: str) -> bytes:
    return md5(key.encode()).digest()
