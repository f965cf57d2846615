"""Seal secrets we must be able to read back (webhook signing secrets) with AES-GCM.

Routing keys and API keys are only ever hashed; a signing secret must be recovered to check
a signature, so it is stored sealed under SECRETS_ENCRYPTION_KEY (32 bytes, base64), never in
clear. The local stage derives a key so `make run` needs no set-up.
"""

from __future__ import annotations

import base64
import hashlib
import os

from chalicelib.settings import Settings

_VERSION = "v1"


def _key(*, settings: Settings) -> bytes:
    if settings.secrets_encryption_key:
        key = base64.b64decode(settings.secrets_encryption_key)
        if len(key) != 32:
            raise RuntimeError("SECRETS_ENCRYPTION_KEY must be 32 bytes, base64-encoded")
        return key
    if not settings.is_local:
        raise RuntimeError("SECRETS_ENCRYPTION_KEY must be set outside the local stage")
    return hashlib.sha256(("tocsin-local-secrets:" + settings.api_key_hmac_secret).encode()).digest()


def seal(plaintext: str, *, context: str, settings: Settings) -> str:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = os.urandom(12)
    sealed = AESGCM(_key(settings=settings)).encrypt(nonce, plaintext.encode(), context.encode())
    return f"{_VERSION}:{base64.b64encode(nonce + sealed).decode()}"


def unseal(token: str, *, context: str, settings: Settings) -> str:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    version, _, payload = token.partition(":")
    if version != _VERSION:
        raise ValueError("unknown sealed-secret version")
    raw = base64.b64decode(payload)
    return AESGCM(_key(settings=settings)).decrypt(raw[:12], raw[12:], context.encode()).decode()
