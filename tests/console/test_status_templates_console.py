"""The console's incident templates: the templates page (list, add, change, delete) per role, and
the Template picker of the status page's incident and update forms; results read back through the
API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import NOW, Org
from tests.console.conftest import CONFIRMED, ROLES, ConsoleClient, action_forms
from tests.console.test_status_pages import StatusPage, api, component_status, status_page  # noqa: F401
from tests.e2e.browser import Element

FIELD = "component_status."


@pytest.fixture
def template_id(status_page: StatusPage) -> str:  # noqa: F811
    """ "DB down": title, body, identified, major, API major_outage."""
    from chalicelib.statuspage import incident_templates
    from chalicelib.statuspage.repository import item_id

    created = incident_templates.create_template(
        page_id=status_page.page_id,
        name="DB down",
        title="Database outage",
        body="We are investigating database errors.",
        status="identified",
        impact="major",
        component_statuses={status_page.api_id: "major_outage"},
        now=NOW,
    )
    return item_id(created)


def chosen(select: Element) -> str:
    """The value of the option a select shows (as a browser does: the first when none is selected)."""
    found = select.find_all("option")
    return str(next((o for o in found if "selected" in o.attrs), found[0]).attrs.get("value"))


def templates_of(client: Any, org: Org, page: StatusPage) -> list[dict[str, Any]]:
    return list(api(client, org, f"/api/v1/status-pages/{page.page_id}/templates")["items"])


def incidents_of(client: Any, org: Org, page: StatusPage) -> list[dict[str, Any]]:
    return list(api(client, org, f"/api/v1/status-pages/{page.page_id}/incidents")["items"])


@pytest.mark.parametrize("role", ROLES)
def test_the_templates_page_renders_for_every_role(
    role: str,
    signed_in: Callable[[str], ConsoleClient],
    status_page: StatusPage,  # noqa: F811
    template_id: str,
) -> None:
    browser = signed_in(role)
    answer = browser.get(f"{status_page.path}/templates")
    assert answer.status == 200
    dom = answer.dom()
    assert dom.find("h1").text() == "Incident templates"
    assert dom.find("p", cls="crumbs").find("a", href=status_page.path).text() == "Acme status"
    row = [td.text() for td in dom.find("tbody").find_all("td")]
    assert row == ["DB down", "Database outage", "identified", "major", "API: major outage"]
    forms = action_forms(answer)
    if role == "viewer":
        assert forms == []
    else:
        assert forms == [
            f"{status_page.path}/templates/{template_id}",
            f"{status_page.path}/templates/{template_id}/delete",
            f"{status_page.path}/templates",
        ]
        edit = dom.find("details", id=f"edit-{template_id}")
        assert edit.find("input", name="name").attrs.get("value") == "DB down"
        assert chosen(edit.find("select", name=FIELD + status_page.api_id)) == "major_outage"
        assert chosen(edit.find("select", name=FIELD + status_page.web_id)) == ""  # no change
        assert chosen(edit.find("select", name="impact")) == "major"
    page = browser.get(status_page.path).dom()
    assert page.find("a", href=f"{status_page.path}/templates").text() == "Incident templates (1)"


def test_an_empty_templates_page_reads_well(as_owner: ConsoleClient, status_page: StatusPage) -> None:  # noqa: F811
    text = as_owner.get(f"{status_page.path}/templates").text()
    assert "No templates yet." in text and "This page has 0 (at most 100)." in text
    page = as_owner.get(status_page.path).dom()
    assert page.find_all("select", name="template_id") == []  # no picker without templates
    assert "required" in page.find("input", id="f-incident-title").attrs


def test_a_template_is_added_changed_and_deleted(
    signed_in: Callable[[str], ConsoleClient],
    client: Any,
    org: Org,
    status_page: StatusPage,  # noqa: F811
) -> None:
    browser = signed_in("responder")
    browser.get(f"{status_page.path}/templates")
    added = browser.post(
        f"{status_page.path}/templates",
        {
            "form": "template",
            "name": "Slow web",
            "title": "Slow pages",
            "body": "Pages load slowly.",
            "status": "",
            "impact": "minor",
            FIELD + status_page.web_id: "degraded_performance",
            FIELD + status_page.api_id: "",
        },
    )
    assert added.status == 303, added.body[:2000]
    assert "Template added." in browser.follow(added).text()
    (found,) = templates_of(client, org, status_page)
    assert (found["name"], found["title"], found["body"]) == ("Slow web", "Slow pages", "Pages load slowly.")
    assert (found["status"], found["impact"]) == (None, "minor")
    assert found["component_statuses"] == {status_page.web_id: "degraded_performance"}

    path = f"{status_page.path}/templates/{found['id']}"
    changed = browser.post(
        path,
        {
            "form": f"template-{found['id']}",
            "name": "Slow web",
            "title": "Slow pages again",
            "body": "Still slow.",
            "status": "identified",
            "impact": "",
            FIELD + status_page.web_id: "",
            FIELD + status_page.api_id: "partial_outage",
        },
    )
    assert changed.status == 303, changed.body[:2000]
    (found,) = templates_of(client, org, status_page)
    assert (found["title"], found["body"], found["status"], found["impact"]) == (
        "Slow pages again",
        "Still slow.",
        "identified",
        None,
    )
    assert found["component_statuses"] == {status_page.api_id: "partial_outage"}

    asked = browser.post(f"{path}/delete", {"form": "delete"})
    assert asked.status == 200 and "Delete this incident template?" in asked.text()
    assert len(templates_of(client, org, status_page)) == 1  # asking changed nothing
    deleted = browser.post(f"{path}/delete", {"form": "delete", **CONFIRMED})
    assert deleted.status == 303
    assert "Template deleted." in browser.follow(deleted).text()
    assert templates_of(client, org, status_page) == []
    assert browser.post(f"{path}/delete", CONFIRMED).status == 404


def test_bad_template_input_is_400_with_the_form_kept(
    as_owner: ConsoleClient,
    client: Any,
    org: Org,
    status_page: StatusPage,  # noqa: F811
    template_id: str,
) -> None:
    as_owner.get(f"{status_page.path}/templates")
    blank = as_owner.post(
        f"{status_page.path}/templates", {"form": "template", "name": "Kept", "title": "", "body": "b"}
    )
    assert blank.status == 400
    dom = blank.dom()
    assert dom.find("input", id="f-new-name").attrs.get("value") == "Kept"
    assert dom.find("input", id="f-new-title").attrs.get("aria-invalid") == "true"
    foreign = as_owner.post(
        f"{status_page.path}/templates",
        {
            "form": "template",
            "name": "X",
            "title": "X",
            "body": "X",
            FIELD + "cmp_000000000000000000000000": "major_outage",
        },
    )
    assert foreign.status == 400 and "no such component on this status page" in foreign.text()
    assert "component_statuses" not in foreign.text()  # named as the form labels it
    bad_edit = as_owner.post(
        f"{status_page.path}/templates/{template_id}",
        {"form": f"template-{template_id}", "name": "DB down", "title": "T", "body": "B", "status": "on_fire"},
    )
    assert bad_edit.status == 400
    edit = bad_edit.dom().find("details", id=f"edit-{template_id}")
    assert "open" in edit.attrs
    assert edit.find("select", name="status").attrs.get("aria-invalid") == "true"
    assert edit.find("input", name="title").attrs.get("value") == "T"
    missing = as_owner.post(
        f"{status_page.path}/templates/tpl_000000000000000000000000",
        {"name": "X", "title": "X", "body": "X"},
    )
    assert missing.status == 404
    assert [t["title"] for t in templates_of(client, org, status_page)] == ["Database outage"]


def test_an_incident_posted_from_only_a_template_takes_all_of_it(
    signed_in: Callable[[str], ConsoleClient],
    client: Any,
    org: Org,
    status_page: StatusPage,  # noqa: F811
    template_id: str,
) -> None:
    browser = signed_in("responder")
    page = browser.get(status_page.path).dom()
    form = page.find("form", action=f"{status_page.path}/incidents")
    picker = form.find("select", name="template_id")
    assert [o.text() for o in picker.find_all("option")] == ["None", "DB down"]
    assert "required" not in form.find("input", name="title").attrs
    assert "required" not in form.find("textarea", name="body").attrs
    status_default = form.find("select", name="status").find_all("option")[0]
    assert (status_default.attrs.get("value"), status_default.text()) == ("", "Template's, or investigating")
    opened = browser.post(
        f"{status_page.path}/incidents",
        {"form": "incident", "template_id": template_id, "title": "", "status": "", "impact": "", "body": ""},
    )
    assert opened.status == 303, opened.body[:2000]
    made = next(i for i in incidents_of(client, org, status_page) if i["title"] == "Database outage")
    assert (made["status"], made["impact"]) == ("identified", "major")
    assert made["updates"][0]["body"] == "We are investigating database errors."
    assert component_status(client, org, status_page, status_page.api_id) == "major_outage"


def test_the_forms_own_values_win_over_the_template(
    as_owner: ConsoleClient,
    client: Any,
    org: Org,
    status_page: StatusPage,  # noqa: F811
    template_id: str,
) -> None:
    as_owner.get(status_page.path)
    opened = as_owner.post(
        f"{status_page.path}/incidents",
        {"form": "incident", "template_id": template_id, "title": "Our words", "status": "", "impact": "critical"},
    )
    assert opened.status == 303, opened.body[:2000]
    made = next(i for i in incidents_of(client, org, status_page) if i["title"] == "Our words")
    assert (made["status"], made["impact"]) == ("identified", "critical")
    assert made["updates"][0]["body"] == "We are investigating database errors."
    update = as_owner.post(
        f"{status_page.path}/incidents/{status_page.incident_id}/updates",
        {"form": f"update-{status_page.incident_id}", "template_id": template_id, "status": "monitoring", "body": ""},
    )
    assert update.status == 303, update.body[:2000]
    slow = api(client, org, f"/api/v1/status-pages/{status_page.page_id}/incidents/{status_page.incident_id}")
    assert (slow["status"], slow["impact"]) == ("monitoring", "major")
    assert slow["updates"][0]["body"] == "We are investigating database errors."


def test_an_unknown_template_is_refused_and_a_blank_status_keeps_the_incidents(
    as_owner: ConsoleClient,
    client: Any,
    org: Org,
    status_page: StatusPage,  # noqa: F811
    template_id: str,
) -> None:
    from chalicelib.statuspage import incident_templates

    as_owner.get(status_page.path)
    gone = "tpl_000000000000000000000000"
    unknown = as_owner.post(
        f"{status_page.path}/incidents", {"form": "incident", "template_id": gone, "title": "Kept title"}
    )
    assert unknown.status == 404
    assert unknown.dom().find("input", id="f-incident-title").attrs.get("value") == "Kept title"
    assert "Incident template not found" in unknown.text(), unknown.text()[:3000]
    garbled = as_owner.post(f"{status_page.path}/incidents", {"form": "incident", "template_id": "nonsense"})
    assert garbled.status == 404
    wordless = incident_templates.create_template(
        page_id=status_page.page_id, name="Words only", title="T", body="Words.", now=NOW
    )
    update_path = f"{status_page.path}/incidents/{status_page.incident_id}/updates"
    form = f"update-{status_page.incident_id}"
    wordless_id = wordless.item_key.removeprefix("TPL#")
    blank_body = as_owner.post(update_path, {"form": form, "template_id": "", "status": "", "body": ""})
    assert blank_body.status == 400
    dom = blank_body.dom()
    assert dom.find("textarea", id=f"f-body-{status_page.incident_id}").attrs.get("aria-invalid") == "true"
    assert len(incidents_of(client, org, status_page)) == 1
    path = f"/api/v1/status-pages/{status_page.page_id}/incidents/{status_page.incident_id}"
    assert len(api(client, org, path)["updates"]) == 1
    # A blank status keeps the incident's own: with a template that sets none, and with no template.
    words = as_owner.post(update_path, {"form": form, "template_id": wordless_id, "status": "", "body": ""})
    assert words.status == 303, words.body[:2000]
    note = as_owner.post(update_path, {"form": form, "template_id": "", "status": "", "body": "Still looking."})
    assert note.status == 303, note.body[:2000]
    slow = api(client, org, path)
    assert [(u["status"], u["body"]) for u in slow["updates"][:2]] == [
        ("investigating", "Still looking."),
        ("investigating", "Words."),
    ]
    assert slow["status"] == "investigating"


def test_a_viewers_forged_template_posts_are_403_and_change_nothing(
    signed_in: Callable[[str], ConsoleClient],
    client: Any,
    org: Org,
    status_page: StatusPage,  # noqa: F811
    template_id: str,
) -> None:
    viewer = signed_in("viewer")
    viewer.get(f"{status_page.path}/templates")
    base = f"{status_page.path}/templates"
    for path, fields in (
        (base, {"name": "Forged", "title": "Forged", "body": "Forged"}),
        (f"{base}/{template_id}", {"name": "Forged", "title": "Forged", "body": "Forged"}),
        (f"{base}/{template_id}/delete", CONFIRMED),
        (f"{status_page.path}/incidents", {"template_id": template_id}),
    ):
        assert viewer.post(path, fields).status == 403, path
    assert [t["name"] for t in templates_of(client, org, status_page)] == ["DB down"]
    assert len(incidents_of(client, org, status_page)) == 1


def test_csrf_and_another_organizations_templates(
    signed_in: Callable[[str], ConsoleClient],
    client: Any,
    org: Org,
    status_page: StatusPage,  # noqa: F811
    template_id: str,
) -> None:
    from chalicelib.statuspage import pages
    from tests.conftest import make_org

    owner = signed_in("owner")
    owner.get(f"{status_page.path}/templates")
    fields = {"name": "N", "title": "T", "body": "B"}
    assert owner.post(f"{status_page.path}/templates", fields, csrf="-").status == 403
    assert owner.post(f"{status_page.path}/templates/{template_id}/delete", CONFIRMED, csrf="bad").status == 403
    other = pages.create_page(organization_id=make_org("Other").organization_id, name="Theirs", slug="theirs", now=NOW)
    assert owner.get(f"/app/status-pages/{other.page_id}/templates").status == 404
    assert owner.post(f"/app/status-pages/{other.page_id}/templates", fields).status == 404
    assert [t["name"] for t in templates_of(client, org, status_page)] == ["DB down"]
