"""The keys budgets count: the mailbox an address reaches, and the network a caller holds."""

from __future__ import annotations

import pytest

from chalicelib.addresses import caller_network, mailbox_key


@pytest.mark.parametrize(
    ("typed", "counted"),
    [
        ("ana@example.com", "ana@example.com"),
        (" Ana@Example.COM ", "ana@example.com"),  # case and spaces
        ("ana+1@example.com", "ana@example.com"),  # a +tag reaches the same mailbox
        ("ANA+News+More@example.com", "ana@example.com"),  # only the first + starts the tag
        ("a.n.a@example.com", "a.n.a@example.com"),  # dots count outside Gmail
        ("a.n.a+x@gmail.com", "ana@gmail.com"),  # Gmail ignores dots
        ("A.N.A@GoogleMail.com", "ana@gmail.com"),  # googlemail.com is gmail.com
        ("victim+7@GMAIL.com", "victim@gmail.com"),
        ("+tag@example.com", "+tag@example.com"),  # nothing before the tag: kept whole
        ("...@gmail.com", "...@gmail.com"),  # nothing but dots: kept whole
        ("ana@sub.gmail.com", "ana@sub.gmail.com"),  # another domain than Gmail's own
        ("not-an-address", "not-an-address"),
    ],
)
def test_the_mailbox_an_address_reaches(typed: str, counted: str) -> None:
    assert mailbox_key(typed) == counted


def test_every_spelling_of_one_gmail_mailbox_is_one_key() -> None:
    spellings = ["victim@gmail.com", "Victim@gmail.com", "v.i.c.t.i.m@gmail.com", "victim+1@googlemail.com"]
    spellings += [f"victim+{n}@gmail.com" for n in range(9)]
    assert {mailbox_key(spelling) for spelling in spellings} == {"victim@gmail.com"}


@pytest.mark.parametrize(
    ("source_ip", "counted"),
    [
        ("203.0.113.7", "203.0.113.7"),  # IPv4: per address
        ("203.0.113.8", "203.0.113.8"),
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),  # the same /64
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),  # the next /64 is another caller
        ("2001:DB8:1:2::abcd", "2001:db8:1:2::/64"),  # any spelling of the address
        ("::ffff:203.0.113.7", "203.0.113.7"),  # IPv4-mapped: the IPv4 address
        ("::1", "::/64"),
        ("testclient", "testclient"),  # not an address: as given
        ("unknown", "unknown"),
    ],
)
def test_the_network_a_caller_is_counted_by(source_ip: str, counted: str) -> None:
    assert caller_network(source_ip) == counted
