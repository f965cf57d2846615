"""Where outbound webhooks may go (SSRF): https only, and every resolved address public. Pure: the
resolver is injected, no DNS is ever asked."""

from __future__ import annotations

import ipaddress

import pytest

from chalicelib.delivery import targets
from chalicelib.delivery.targets import check_target, is_public_address, validate_target_url
from chalicelib.errors import ValidationFailed
from chalicelib.settings import get_settings

PUBLIC_V4 = "93.184.216.34"
PUBLIC_V6 = "2606:4700:4700::1111"


def resolver(*addresses: str) -> targets.Resolver:
    def resolve(host: str, port: int) -> list[str]:
        return list(addresses)

    return resolve


def never_called(host: str, port: int) -> list[str]:
    raise AssertionError(f"resolved {host}:{port}")


def refusal(url: str, *, allow_local: bool = False, resolve: targets.Resolver = never_called) -> str:
    with pytest.raises(ValidationFailed) as caught:
        validate_target_url(url, allow_local=allow_local, resolve=resolve, settings=get_settings())
    assert caught.value.status == 400 and caught.value.code == "VALIDATION_ERROR"
    [field] = caught.value.details["fields"]  # type: ignore[index]
    assert field["field"] == "url"
    return str(field["message"])


# --- shape of the URL ------------------------------------------------------------------------------


def test_public_https_url_resolving_to_public_addresses_passes_with_its_addresses() -> None:
    seen: list[tuple[str, int]] = []

    def resolve(host: str, port: int) -> list[str]:
        seen.append((host, port))
        return [PUBLIC_V4, PUBLIC_V6]

    target = check_target(
        "https://Hooks.Example.com/tocsin?x=1", allow_local=False, resolve=resolve, settings=get_settings()
    )
    assert seen == [("hooks.example.com", 443)]
    assert (target.scheme, target.host, target.port) == ("https", "hooks.example.com", 443)
    assert target.addresses == (PUBLIC_V4, PUBLIC_V6)
    # Only port 443 now; any other is refused (test_outside_the_local_stage_only_port_443).
    assert (
        check_target(
            "https://hooks.example.com:443/", allow_local=False, resolve=resolver(PUBLIC_V4), settings=get_settings()
        ).port
        == 443
    )
    assert (
        validate_target_url(f"https://{PUBLIC_V4}/x", allow_local=False, resolve=never_called, settings=get_settings())
        is None
    )
    assert check_target(
        f"https://[{PUBLIC_V6}]/x", allow_local=False, resolve=never_called, settings=get_settings()
    ).addresses == (PUBLIC_V6,)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://hooks.example.com/x", "must use https"),
        ("ftp://hooks.example.com/x", "must use https"),
        ("file:///etc/passwd", "must use https"),
        ("hooks.example.com/x", "must use https"),
        ("", "1 to 2048 characters"),
        ("https://hooks.example.com/" + "a" * 2048, "1 to 2048 characters"),
        ("https://hooks.example.com/a b", "only URL characters"),
        ("https://evil.example\\@127.0.0.1/", "only URL characters"),
        ("https://hooks.example.com/\nx", "only URL characters"),
        ("https://user:pass@hooks.example.com/", "must not carry credentials"),
        ("https://hooks.example.com@127.0.0.1/", "must not carry credentials"),
        ("https:///path-only", "must name a host"),
        ("https://hooks.example.com:99999/", "invalid port"),
        ("https://hooks.example.com:port/", "invalid port"),
    ],
)
def test_malformed_or_plain_http_urls_are_refused(url: str, problem: str) -> None:
    assert problem in refusal(url)


def test_the_local_stage_may_send_plain_http_to_any_address_without_resolving() -> None:
    for url in ("http://127.0.0.1:8000/local/webhook-sink/demo", "https://localhost/x", "http://10.0.0.5/x"):
        assert check_target(url, allow_local=True, resolve=never_called, settings=get_settings()).addresses == ()
    # Still a URL: scheme, credentials and characters are checked.
    assert "https or http" in refusal("ftp://127.0.0.1/x", allow_local=True)
    assert "credentials" in refusal("http://a:b@127.0.0.1/x", allow_local=True)


# --- addresses -------------------------------------------------------------------------------------

REFUSED_ADDRESSES = [
    "127.0.0.1",  # loopback
    "127.255.255.254",
    "10.0.0.1",  # private
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",  # link-local: the cloud metadata service
    "100.64.0.1",  # carrier-grade NAT
    "0.0.0.0",  # unspecified
    "0.1.2.3",
    "224.0.0.1",  # multicast
    "239.255.255.250",
    "240.0.0.1",  # reserved
    "255.255.255.255",
    "192.0.2.10",  # documentation
    "198.18.0.1",  # benchmarking
    "::1",  # IPv6 loopback
    "::",  # IPv6 unspecified
    "fe80::1",  # IPv6 link-local
    "fe80::1%eth0",  # with a zone
    "fc00::1",  # unique local
    "fd12:3456:789a::1",
    "ff02::1",  # IPv6 multicast
    "2001:db8::1",  # documentation
    "::ffff:127.0.0.1",  # IPv4-mapped loopback
    "::ffff:10.0.0.1",  # IPv4-mapped private
    "::ffff:169.254.169.254",
    "2002:a00:1::1",  # 6to4 carrying 10.0.0.1
    "2002:7f00:1::1",  # 6to4 carrying 127.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 carrying 169.254.169.254
    "::127.0.0.1",  # IPv4-compatible (deprecated)
    "fec0::1",  # site-local (deprecated)
]


@pytest.mark.parametrize("address", REFUSED_ADDRESSES)
def test_a_host_resolving_to_a_non_public_address_is_refused(address: str) -> None:
    problem = refusal("https://hooks.example.com/x", resolve=resolver(address))
    assert f"resolves to {address}, which is not a public address" in problem


@pytest.mark.parametrize("address", [a for a in REFUSED_ADDRESSES if "%" not in a])
def test_a_literal_non_public_address_is_refused_without_resolving(address: str) -> None:
    host = f"[{address}]" if ":" in address else address
    assert "is not a public address" in refusal(f"https://{host}/x")


@pytest.mark.parametrize(
    ("name", "address"),
    [("localhost", "127.0.0.1"), ("metadata.internal", "169.254.169.254"), ("db.corp.example", "10.1.2.3")],
)
def test_names_resolving_inside_are_refused(name: str, address: str) -> None:
    problem = refusal(f"https://{name}/hook", resolve=resolver(address))
    assert problem == (
        f"the host {name} resolves to {address}, which is not a public address "
        "(private, loopback, link-local and reserved addresses are refused)"
    )


def test_one_private_address_among_public_ones_is_enough_to_refuse() -> None:
    assert "10.0.0.7" in refusal("https://hooks.example.com/", resolve=resolver(PUBLIC_V4, "10.0.0.7", PUBLIC_V6))


def test_numeric_host_spellings_are_judged_by_what_they_resolve_to() -> None:
    # 2130706433 and 0x7f.1 are 127.0.0.1 to the system resolver; they are not IP literals here.
    for host in ("2130706433", "0x7f.1", "017700000001"):
        assert "127.0.0.1" in refusal(f"https://{host}/", resolve=resolver("127.0.0.1"))


def test_a_zone_in_the_url_does_not_hide_a_link_local_literal() -> None:
    assert "not a public address" in refusal("https://[fe80::1%25eth0]/x")


def test_unresolvable_hosts_are_refused() -> None:
    def fails(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    def bad_name(host: str, port: int) -> list[str]:
        raise UnicodeError("label too long")

    assert refusal("https://nowhere.invalid/", resolve=fails) == "the host nowhere.invalid does not resolve"
    assert refusal("https://nowhere.invalid/", resolve=resolver()) == "the host nowhere.invalid does not resolve"
    assert "does not resolve" in refusal("https://x.example/", resolve=bad_name)
    assert "not a public address" in refusal("https://x.example/", resolve=resolver("not-an-ip"))


def test_is_public_address() -> None:
    for text in (
        PUBLIC_V4,
        "8.8.8.8",
        "1.1.1.1",
        PUBLIC_V6,
        "2a00:1450:4001::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
    ):
        assert is_public_address(ipaddress.ip_address(text)), text
    for text in REFUSED_ADDRESSES:
        assert not is_public_address(ipaddress.ip_address(text.split("%")[0])), text


def test_default_resolve_asks_the_system_resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[str, int]] = []

    def getaddrinfo(host: str, port: int, type: int = 0) -> list[tuple[object, ...]]:
        asked.append((host, port))
        return [
            (2, 1, 6, "", (PUBLIC_V4, port)),
            (10, 1, 6, "", (PUBLIC_V6, port, 0, 0)),
            (2, 1, 6, "", (PUBLIC_V4, port)),
        ]

    monkeypatch.setattr(targets.socket, "getaddrinfo", getaddrinfo)
    assert targets.default_resolve("hooks.example.com", 443) == [PUBLIC_V4, PUBLIC_V6]
    assert asked == [("hooks.example.com", 443)]


# --- special-purpose ranges, ports, and the local emulator (issue 13, finding 16) -------------------

SPECIAL_PURPOSE_ADDRESSES = [
    "192.0.0.1",  # IETF protocol assignments: all of 192.0.0.0/24
    "192.0.0.8",  # IPv4 dummy address (192.0.0.8/32)
    "192.0.0.9",  # Port Control Protocol anycast
    "192.0.0.10",  # TURN anycast
    "192.0.0.100",
    "192.0.0.170",  # NAT64/DNS64 discovery
    "192.0.0.255",
    "192.31.196.1",  # AS112-v4
    "192.52.193.1",  # AMT
    "192.88.99.1",  # deprecated 6to4 relay anycast
    "192.175.48.1",  # direct delegation AS112
    "198.51.100.7",  # documentation
    "203.0.113.7",
    "100::1",  # discard-only
    "2001::1",  # Teredo
    "2001:1::1",  # PCP anycast
    "2001:1::2",  # TURN anycast
    "2001:2::1",  # benchmarking
    "2001:3::1",  # AMT
    "2001:4:112::1",  # AS112-v6
    "2001:20::1",  # ORCHIDv2
    "2620:4f:8000::1",  # direct delegation AS112
    "64:ff9b:1::1",  # local-use IPv4/IPv6 translation
    "3fff::1",  # documentation (2024)
    "5f00::1",  # SRv6 SIDs
]


@pytest.mark.parametrize("address", SPECIAL_PURPOSE_ADDRESSES)
def test_every_special_purpose_range_is_refused(address: str) -> None:
    assert not is_public_address(ipaddress.ip_address(address)), address
    assert "not a public address" in refusal("https://hooks.example.com/x", resolve=resolver(address))


@pytest.mark.parametrize("port", [8443, 80, 22, 6379, 5000, 444])
def test_outside_the_local_stage_only_port_443(port: int) -> None:
    problem = refusal(f"https://hooks.example.com:{port}/x", resolve=resolver(PUBLIC_V4))
    assert "443" in problem
    assert (
        check_target(
            "https://hooks.example.com:443/x", allow_local=False, resolve=resolver(PUBLIC_V4), settings=get_settings()
        ).port
        == 443
    )


def test_the_local_stage_refuses_the_emulator_and_its_control_paths() -> None:
    emulator = ("http://127.0.0.1:5123",)

    def local(url: str) -> str:
        with pytest.raises(ValidationFailed) as caught:
            check_target(
                url, allow_local=True, resolve=never_called, emulator_endpoints=emulator, settings=get_settings()
            )
        return str(caught.value.details["fields"][0]["message"])  # type: ignore[index]

    for url in (
        "http://127.0.0.1:5123/moto-api/reset",
        "http://localhost:5123/",
        "http://[::1]:5123/x",
        "http://0.0.0.0:5123/x",
        "http://127.0.0.2:5123/x",
    ):
        assert "emulator" in local(url), url
    for url in (
        "http://127.0.0.1:8000/moto-api/reset",
        "http://127.0.0.1:8000//moto-api/reset",
        "http://127.0.0.1:8000/%6Doto-api/reset",
        "http://127.0.0.1:8000/x/../MOTO-API/data.json",
    ):
        assert "moto-api" in local(url), url
    # The local sink (and anything else) is still fine.
    sink = "http://127.0.0.1:8000/local/webhook-sink/demo"
    assert (
        check_target(
            sink, allow_local=True, resolve=never_called, emulator_endpoints=emulator, settings=get_settings()
        ).port
        == 8000
    )


def test_the_emulator_endpoints_come_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from chalicelib.settings import reset_settings

    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:5999")
    monkeypatch.setenv("LOCAL_SNS_CERTIFICATE_ENDPOINT", "http://127.0.0.1:6001")
    reset_settings()
    try:
        for port in (5999, 6001):
            with pytest.raises(ValidationFailed):
                check_target(
                    f"http://localhost:{port}/", allow_local=True, resolve=never_called, settings=get_settings()
                )
    finally:
        monkeypatch.undo()
        reset_settings()
