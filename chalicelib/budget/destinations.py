"""The destination a budget counts: one key per phone, mailbox or chat user, however it is spelled.

A per-destination limit is only as good as its key: `Ana@x`, `ana+1@x` and at Gmail
`a.n.a@googlemail.com` reach one mailbox, and `+1 (555) 010-0001`, `001 555 0100001` one phone.
These give the key that is counted; what is sent and shown stays as the person wrote it. Pure.
"""

from __future__ import annotations

import re

# Providers that publish their rules: dots in the local part are ignored and the domains are one.
_DOTLESS_DOMAINS = {"gmail.com": "gmail.com", "googlemail.com": "gmail.com"}
_PHONE_PUNCTUATION = re.compile(r"[\s().\-/]")
PHONE_CHANNELS = frozenset({"sms", "voice"})


def mailbox_key(email: str) -> str:
    """The mailbox an address reaches, as far as public rules tell: lower-cased, the `+tag` taken
    off the local part, and for Gmail the dots too (googlemail.com counted as gmail.com). An
    address without `@` is only trimmed and lower-cased."""
    cleaned = email.strip().lower()
    local, at, domain = cleaned.rpartition("@")
    if not at or not local:
        return cleaned
    untagged = local.split("+", 1)[0] or local  # `+tag@x` alone keeps its local part
    domain = _DOTLESS_DOMAINS.get(domain.rstrip("."), domain.rstrip("."))
    if domain == "gmail.com":
        untagged = untagged.replace(".", "") or untagged
    return f"{untagged}@{domain}"


def phone_key(phone: str) -> str:
    """The number in E.164: punctuation and spaces dropped, a leading `00` read as `+`."""
    digits = _PHONE_PUNCTUATION.sub("", phone.strip())
    if digits.startswith("00"):
        digits = "+" + digits[2:]
    return digits


def destination_key(channel: str, address: str) -> str:
    """`phone:+15550100001` (SMS and calls alike: one phone, however it is reached),
    `email:ana@gmail.com`, `slack:U0ANA` (a chat user id as given: ids are case-sensitive)."""
    if channel in PHONE_CHANNELS:
        return f"phone:{phone_key(address)}"
    if channel == "email":
        return f"email:{mailbox_key(address)}"
    return f"{channel}:{address.strip()}"
