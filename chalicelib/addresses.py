"""Who a destination or a caller really is, for counting: pure functions, no I/O.

A budget counted per email address or per caller address is only as good as its key. One mailbox
answers to many spellings (`Ana@x`, `ana+1@x`, and at Gmail `a.n.a@googlemail.com`), and one
IPv6 customer holds a whole /64 (RFC 6177), so counting the spelling or the single address lets a
sender go round the budget. These functions give the key that is counted; what is stored and
shown stays as the person typed it.
"""

from __future__ import annotations

import ipaddress

# Providers that publish their rules: dots in the local part are ignored and the domains are one.
_DOTLESS_DOMAINS = {"gmail.com": "gmail.com", "googlemail.com": "gmail.com"}
IPV6_NETWORK_BITS = 64


def mailbox_key(email: str) -> str:
    """The mailbox an address reaches, as far as public rules tell: lower-cased, the `+tag` taken
    off the local part, and for Gmail the dots too (googlemail.com counted as gmail.com).

    An address without `@` is only trimmed and lower-cased (callers validate addresses first)."""
    cleaned = email.strip().lower()
    local, at, domain = cleaned.rpartition("@")
    if not at or not local:
        return cleaned
    untagged = local.split("+", 1)[0] or local  # `+tag@x` alone keeps its local part
    domain = _DOTLESS_DOMAINS.get(domain, domain)
    if domain == "gmail.com":
        untagged = untagged.replace(".", "") or untagged
    return f"{untagged}@{domain}"


def caller_network(source_ip: str) -> str:
    """The caller as a per-address budget counts it: an IPv4 address alone, an IPv6 address by its
    /64 (`2001:db8:1:2::/64`); an IPv4-mapped IPv6 address is its IPv4 address. Anything that is
    not an address (a test client's name) is counted as given."""
    try:
        address = ipaddress.ip_address(source_ip.strip())
    except ValueError:
        return source_ip
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, IPV6_NETWORK_BITS), strict=False))
    return str(address)
