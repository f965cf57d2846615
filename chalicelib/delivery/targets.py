"""Where a POST to a URL a customer gave may go: https URLs on port 443 whose host resolves only
to public addresses (SSRF). Outbound webhook subscriptions and status-page webhook followers use
it today, and so must any channel that posts to a customer's URL (chalicelib/delivery/http_post.py).

Checked when a subscription is written and again right before every delivery, because a name
that resolved to a public address yesterday may resolve to 169.254.169.254 today (DNS
rebinding). "Public" excludes every IANA special-purpose range (private, loopback, link-local,
documentation, benchmarking, all of 192.0.0.0/24, AS112, Teredo, ...): Python's own flags miss
some of them, so they are listed here. The local stage (settings.local_allow_http_webhooks) may
send plain http to any address and port, so `make run` can deliver to its own sink on 127.0.0.1,
except to the emulator (AWS_ENDPOINT_URL's port: posting to its reset URL wipes every table) and
to any `/moto-api` path.

Pure apart from the resolver, which is injected (tests never touch DNS).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from chalicelib.errors import ValidationFailed
from chalicelib.settings import Settings

Resolver = Callable[[str, int], list[str]]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_URL_LENGTH = 2048
FIELD = "url"
# RFC 3986 characters only: anything else (spaces, backslashes, control characters) is where
# URL parsers disagree, and a disagreement between this check and the HTTP client is an SSRF.
_URL_CHARACTERS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+$")
# What the document says of a target URL: http(s), then those characters (the rest is checked here).
URL_PATTERN = "^[Hh][Tt][Tt][Pp][Ss]?://" + _URL_CHARACTERS.pattern[1:]
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
HTTPS_PORT = 443
# IANA special-purpose address registries (IPv4 and IPv6), whole blocks, globally reachable or
# not: no webhook receiver lives there. The IPv6 translation prefixes (::ffff:0:0/96,
# 64:ff9b::/96, 2002::/16) are judged by the IPv4 address they carry instead.
_SPECIAL_PURPOSE_NETWORKS: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = tuple(
    ipaddress.ip_network(block)
    for block in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.31.196.0/24",
        "192.52.193.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "192.175.48.0/24",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
        "::/128",
        "::1/128",
        "64:ff9b:1::/48",
        "100::/64",
        "100:0:0:1::/64",
        "2001::/23",
        "2001:db8::/32",
        "2620:4f:8000::/48",
        "3fff::/20",
        "5f00::/16",
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
    )
)


@dataclass(frozen=True)
class Target:
    """A checked URL: its host, port and (outside the local stage) the public addresses it resolved to.

    A sender that connects to one of `addresses` rather than resolving again closes the gap
    between the check and the connection."""

    url: str
    scheme: str
    host: str
    port: int
    addresses: tuple[str, ...]


def default_resolve(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for host:port (IPv4 and IPv6)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _refuse(problem: str) -> ValidationFailed:
    return ValidationFailed.for_field(FIELD, problem)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries to an IPv4 host (mapped, 6to4, NAT64), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_public_address(address: IPAddress) -> bool:
    """True only for globally routable unicast addresses; an IPv6 address carrying an IPv4 one
    is judged by the IPv4 address it reaches."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return is_public_address(embedded)
    if any(address.version == network.version and address in network for network in _SPECIAL_PURPOSE_NETWORKS):
        return False
    # is_global alone lets multicast through (224.0.0.0/4 is not "private"), hence every flag.
    return address.is_global and not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )


def _parse_address(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])  # drop an IPv6 zone ("fe80::1%eth0")
    except ValueError:
        return None


def parse_target(url: str, *, allow_local: bool) -> tuple[str, str, int]:
    """(scheme, host, port) of a well-formed webhook URL, or ValidationFailed on field `url`."""
    if not url or len(url) > MAX_URL_LENGTH:
        raise _refuse(f"must be a URL of 1 to {MAX_URL_LENGTH} characters")
    if not _URL_CHARACTERS.match(url):
        raise _refuse("must contain only URL characters (percent-encode spaces and the like)")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    allowed = ("https", "http") if allow_local else ("https",)
    if scheme not in allowed:
        raise _refuse("must use https" if not allow_local else "must use https or http")
    if "@" in parts.netloc:
        raise _refuse("must not carry credentials (user:password@); authenticate with the signature instead")
    host = parts.hostname
    if not host:
        raise _refuse("must name a host")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise _refuse("has an invalid port") from None
    return scheme, host, port


def _emulator_ports(endpoints: tuple[str, ...] | None, *, settings: Settings) -> set[int]:
    if endpoints is None:
        endpoints = tuple(e for e in (settings.aws_endpoint_url, settings.local_sns_certificate_endpoint) if e)
    ports: set[int] = set()
    for endpoint in endpoints:
        try:
            parts = urlsplit(endpoint)
            ports.add(parts.port or (443 if parts.scheme.lower() == "https" else 80))
        except ValueError:
            continue
    return ports


def _check_local(url: str, port: int, emulator_endpoints: tuple[str, ...] | None, *, settings: Settings) -> None:
    """The local stage's only refusals: the emulator itself, on any host name or loopback address
    (posting to its reset URL wipes every table), and its control paths on any host."""
    if port in _emulator_ports(emulator_endpoints, settings=settings):
        raise _refuse(f"port {port} is the local AWS emulator's; subscriptions may not target the emulator")
    if "moto-api" in unquote(urlsplit(url).path).lower():
        raise _refuse("must not target the emulator's control paths (/moto-api)")


def check_target(
    url: str,
    *,
    allow_local: bool,
    resolve: Resolver = default_resolve,
    emulator_endpoints: tuple[str, ...] | None = None,
    settings: Settings,
) -> Target:
    """The checked target; ValidationFailed on field `url` when it may not be delivered to.
    `emulator_endpoints` (local stage): the emulator's URLs; by default AWS_ENDPOINT_URL and
    LOCAL_SNS_CERTIFICATE_ENDPOINT."""
    scheme, host, port = parse_target(url, allow_local=allow_local)
    if allow_local:
        _check_local(url, port, emulator_endpoints, settings=settings)
        return Target(url, scheme, host, port, ())
    if port != HTTPS_PORT:
        raise _refuse(f"must use the default https port ({HTTPS_PORT})")
    literal = _parse_address(host)
    if literal is not None:
        texts = [str(literal)]
    else:
        try:
            texts = resolve(host, port)
        except (OSError, UnicodeError):
            raise _refuse(f"the host {host} does not resolve") from None
        if not texts:
            raise _refuse(f"the host {host} does not resolve")
    for text in texts:
        address = _parse_address(text)
        if address is None or not is_public_address(address):
            where = "is" if literal is not None else f"resolves to {text}, which is"
            raise _refuse(
                f"the host {host} {where} not a public address (private, loopback, link-local and "
                "reserved addresses are refused)"
            )
    return Target(url, scheme, host, port, tuple(str(_parse_address(t)) for t in texts))


def validate_target_url(
    url: str, *, allow_local: bool, resolve: Resolver = default_resolve, settings: Settings
) -> None:
    """Raise ValidationFailed (field `url`) unless outbound webhooks may be delivered to `url`."""
    check_target(url, allow_local=allow_local, resolve=resolve, settings=settings)


def local_targets_allowed(*, settings: Settings) -> bool:
    """Only the local stage may send plain http to any address, and only when its config says so."""
    return settings.is_local and settings.local_allow_http_webhooks
