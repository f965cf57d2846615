"""The subscribe form on the status page and the subscriber flow's own pages, rendered (pure):
data is escaped, every control is labelled, ids are unique and come from no data, no script."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.statuspage.page_html import render_status_page
from chalicelib.statuspage.subscribe_form import subscribe_form
from chalicelib.subscriber import pages
from tests.e2e.browser import Element, parse

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
EVIL = '<script>alert("x")</script> & "quotes" \'too\''


def components(name: str) -> dict[str, Any]:
    def one(number: int) -> dict[str, Any]:
        return {
            "component_id": f"cmp_{number}",
            "name": name,
            "status": "operational",
            "updated_at": "2026-11-22T12:00:00Z",
        }

    return {
        "sections": [
            {
                "section_id": "sec_1",
                "name": name,
                "components": [one(1)],
                "groups": [{"group_id": "grp_1", "name": name, "components": [one(2)]}],
            }
        ]
    }


def status_page(name: str, **form: Any) -> Element:
    document = components(name)
    summary = {
        "page": {"name": name, "url": "https://s.example/status/acme"},
        "status": "operational",
        "updated_at": "2026-11-22T12:00:00Z",
    }
    markup = render_status_page(
        summary=summary,
        components=document,
        incidents=[],
        maintenance=[],
        now=NOW,
        subscribe=subscribe_form(document, action="acme/subscribe", **form),
    )
    return parse(markup)


def labelled(document: Element) -> None:
    """Every control has a label: `for` an id, or wrapped in one."""
    ids = [element.attrs["id"] for element in document.iter() if element.attrs.get("id")]
    assert [name for name, count in Counter(ids).items() if count > 1] == []
    targets = {label.attrs.get("for") for label in document.find_all("label")}
    wrapped = {id(control) for label in document.find_all("label") for control in label.find_all("input")}
    for control in document.find_all("input"):
        assert control.attrs.get("id") in targets or id(control) in wrapped, control.attrs


@settings(max_examples=40, deadline=None)
@given(text=st.text(min_size=1, max_size=30))
def test_any_component_name_is_text_in_the_form(text: str) -> None:
    document = status_page(text)
    form = document.find("section", id="subscribe").find("form")
    expected = " ".join(text.split())
    assert [label.text() for label in form.find_all("label", cls="check")] == [expected, expected]
    assert [legend.text() for legend in form.find_all("legend")] == [expected, expected]
    assert [box.attrs["value"] for box in form.find_all("input", type="checkbox")] == ["cmp_1", "cmp_2"]
    assert document.find_all("script") == []
    labelled(document)


def test_the_form_keeps_what_was_typed_and_names_the_problem() -> None:
    document = status_page("Core", email=EVIL, chosen=["cmp_2"], problems={"email": "Enter an email address."})
    field = document.find("input", id="subscribe-email")
    assert field.attrs["value"] == EVIL and field.attrs["aria-invalid"] == "true"
    assert document.find(id=field.attrs["aria-describedby"] or "").text() == "Enter an email address."
    assert ["checked" in box.attrs for box in document.find_all("input", type="checkbox")] == [False, True]
    assert "open" in document.find("details").attrs
    assert document.find_all("script") == []


def test_the_flow_pages_escape_the_page_name_and_link_back() -> None:
    for markup in (
        pages.check_inbox(EVIL, "https://s.example/status/acme"),
        pages.outcome_page(EVIL, "https://s.example/status/acme", "unsubscribed"),
        pages.button_page(EVIL, "https://s.example/status/acme", "unsubscribe", "s1.a.b"),
        pages.form_again(EVIL, "https://s.example/status/acme", subscribe_form(components(EVIL), action="subscribe")),
    ):
        document = parse(markup)
        assert document.find("h1").text() == " ".join(EVIL.split()) and document.find_all("script") == []
        assert document.find("a", href="https://s.example/status/acme") is not None
        labelled(document)
    button = parse(pages.button_page("Acme", "https://s.example/status/acme", "confirm", "s1.a.b"))
    form = button.find("form")
    assert (form.attrs["method"], form.attrs["action"]) == ("post", "confirm?token=s1.a.b")
    assert [b.text() for b in button.find_all("button")] == ["Confirm subscription"]
    assert "expired" in parse(pages.link_problem(404)).find("h2").text()
    assert "not valid" in parse(pages.link_problem(400)).find("h2").text()
    assert "30 seconds" in parse(pages.too_many("Acme", None, "30")).text()
