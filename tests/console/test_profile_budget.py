"""The console's profile form under the outbound budget: the probe's loop (add a number, send a
code, remove it, again) sends three codes, then the form says why not and when to try again."""

from __future__ import annotations

from collections.abc import Callable

from chalicelib import clock
from chalicelib.contact import service
from tests.conftest import Org
from tests.console.conftest import CONFIRMED, ConsoleClient, Person

PHONE = "+15550188888"


def test_the_fourth_code_to_one_number_is_refused_with_a_clear_message(
    signed_in: Callable[[str], ConsoleClient], people: dict[str, Person], org: Org
) -> None:
    viewer = people["viewer"]
    browser = signed_in("viewer")
    statuses = []
    refused = None
    for _ in range(4):
        browser.get("/app/profile")
        assert browser.post("/app/profile/contact-methods", {"type": "sms", "address": PHONE}).status == 303
        methods = service.list_methods(organization_id=org.organization_id, user_id=viewer.user_id, now=clock.now())
        (sms,) = [m for m in methods if m.type == "sms"]
        base = f"/app/profile/contact-methods/{sms.contact_method_id}"
        browser.get("/app/profile")
        answer = browser.post(base + "/send-code")
        statuses.append(answer.status)
        refused = answer
        browser.get("/app/profile")
        assert browser.post(base + "/remove", CONFIRMED).status == 303
    assert statuses == [303, 303, 303, 429]
    assert refused is not None and int(refused.headers["retry-after"]) > 0
    text = " ".join(refused.text().split())
    assert "At most 3 verification codes sent to one phone number an hour" in text
    assert "there is room again in" in text and "My profile" in text
