"""Model fields of parity's own: a text encrypted at rest (docs/settings.md, PARITY_SECRETS_KEYS).

A secret that keys an HMAC cannot be stored as a digest, so it is stored as a Fernet token: a
reader of the database (a backup, a replica, a support dump) sees ciphertext. The keys are
PARITY_SECRETS_KEYS, newest first (MultiFernet: the first encrypts, any decrypts, so a key is
rotated by listing the new one before the old); unset, one key derived from SECRET_KEY.
"""

import base64
import functools
from dataclasses import dataclass

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.db import models

# Changing it changes the derived key, as changing SECRET_KEY does.
DERIVED_KEY_INFO = b"parity secrets at rest v1"


@functools.lru_cache(maxsize=4)
def key_derived(secret_key: str) -> str:
    """The Fernet key parity uses when PARITY_SECRETS_KEYS is unset: HKDF-SHA256 of SECRET_KEY."""
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=DERIVED_KEY_INFO)
    return base64.urlsafe_b64encode(hkdf.derive(secret_key.encode())).decode()


def keys_in_use() -> tuple[str, ...]:
    return tuple(settings.PARITY_SECRETS_KEYS) or (key_derived(settings.SECRET_KEY),)


@functools.lru_cache(maxsize=4)
def _box(keys: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(key) for key in keys])


def secret_encrypt(plain: str) -> str:
    return _box(keys_in_use()).encrypt(plain.encode()).decode()


def secret_decrypt(token: str) -> str:
    """The plain text of ``token``; raises ``InvalidToken`` when no key in use opens it."""
    return _box(keys_in_use()).decrypt(token.encode()).decode()


@dataclass(frozen=True)
class Unreadable:
    """A stored value no key in use decrypts: the keys changed without the old one listed.
    Deliberately not a ``str``, so it is never used as the secret by mistake; saved again, it
    is written back as it was."""

    token: str

    def __str__(self) -> str:
        return UNREADABLE_HELP


UNREADABLE_HELP = (
    "cannot be read: it was encrypted with a key that is no longer in use. List the old key in "
    "PARITY_SECRETS_KEYS after the new one (or restore the old SECRET_KEY) and restart parity."
)


# How a serialized value (``dumpdata``, a fixture) marks the ciphertext it carries.
SERIALIZED_PREFIX = "parity-encrypted:"


class EncryptedTextField(models.TextField):
    """Text stored encrypted, read as plain text (or ``Unreadable``). Encryption is randomized:
    the column cannot be filtered or made unique on.

    Serialized (``dumpdata``), it is ciphertext too, marked ``parity-encrypted:<token>``: a
    dump is a copy of the database and reveals no more than one. ``loaddata`` reads such a value
    back with the keys in use (a dump loads where its key is listed)."""

    def value_to_string(self, obj) -> str | None:
        value = self.value_from_object(obj)
        if value is None:
            return None
        token = value.token if isinstance(value, Unreadable) else secret_encrypt(str(value))
        return f"{SERIALIZED_PREFIX}{token}"

    def to_python(self, value):
        if isinstance(value, str) and value.startswith(SERIALIZED_PREFIX):
            token = value.removeprefix(SERIALIZED_PREFIX)
            try:
                return secret_decrypt(token)
            except InvalidToken:
                return Unreadable(token)
        return super().to_python(value)

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        try:
            return secret_decrypt(value)
        except InvalidToken:
            return Unreadable(value)

    def get_prep_value(self, value):
        if value is None:
            return None
        if isinstance(value, Unreadable):
            return value.token
        return secret_encrypt(str(value))
