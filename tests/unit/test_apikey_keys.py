"""API key format and hashing: pure functions, no AWS."""

from __future__ import annotations

import hashlib
import hmac
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.apikey import keys

ALPHABET = set(string.ascii_letters + string.digits)


def test_generated_key_has_prefix_and_40_base62_characters() -> None:
    key = keys.generate_key()
    assert keys.KEY_PREFIX == "tcs_"
    assert key.startswith("tcs_")
    body = key[len(keys.KEY_PREFIX) :]
    assert len(body) == 40
    assert set(body) <= ALPHABET
    assert keys.looks_like_key(key)


def test_generated_keys_are_unique() -> None:
    assert len({keys.generate_key() for _ in range(200)}) == 200


@pytest.mark.parametrize(
    "credential",
    [
        "",
        "tcs_",
        "tcs_short",
        "tcs_" + "a" * 39,
        "tcs_" + "a" * 41,
        "tcs_" + "a" * 39 + "-",
        "tcs_" + "a" * 39 + "é",
        "xyz_" + "a" * 40,
        "TCS_" + "a" * 40,
        "a" * 44,
    ],
)
def test_looks_like_key_rejects_malformed(credential: str) -> None:
    assert not keys.looks_like_key(credential)


def test_hash_is_hmac_sha256_of_the_key_with_the_secret() -> None:
    key = keys.generate_key()
    expected = hmac.new(b"secret", key.encode(), hashlib.sha256).hexdigest()
    assert keys.hash_key("secret", key) == expected
    assert keys.hash_key("secret", key) != key
    assert len(keys.hash_key("secret", key)) == 64


def test_hash_depends_on_the_secret() -> None:
    key = keys.generate_key()
    assert keys.hash_key("one", key) != keys.hash_key("two", key)


def test_display_prefix_is_recognisable_but_not_usable() -> None:
    key = keys.generate_key()
    prefix = keys.display_prefix(key)
    assert prefix == key[:10]
    assert key.startswith(prefix)
    assert not keys.looks_like_key(prefix)


def test_hashes_match_is_exact() -> None:
    digest = keys.hash_key("s", "tcs_x")
    assert keys.hashes_match(digest, digest)
    assert not keys.hashes_match(digest, digest[:-1] + ("0" if digest[-1] != "0" else "1"))
    assert not keys.hashes_match(digest, "")


def test_derive_key_is_deterministic_and_well_formed() -> None:
    first = keys.derive_key("seed", "owner")
    assert first == keys.derive_key("seed", "owner")
    assert first != keys.derive_key("seed", "readonly")
    assert first != keys.derive_key("other-seed", "owner")
    assert keys.looks_like_key(first)


@given(st.text(min_size=0, max_size=60))
def test_looks_like_key_accepts_exactly_the_format(candidate: str) -> None:
    body = candidate[len(keys.KEY_PREFIX) :] if candidate.startswith(keys.KEY_PREFIX) else None
    expected = body is not None and len(body) == 40 and set(body) <= ALPHABET
    assert keys.looks_like_key(candidate) == expected
