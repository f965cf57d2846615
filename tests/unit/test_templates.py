"""The template environment: autoescape in every HTML template, plain text in the text parts, loud
failure on a missing variable, and Jinja2 loaded only by a rendering."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import jinja2
import pytest

from chalicelib import templates
from chalicelib.notification import email_ses, webhook_notice
from chalicelib.notification.channels import Notification, Recipient
from chalicelib.postmortem import rules
from chalicelib.settings import get_settings
from chalicelib.statuspage.page_html import render_error, render_not_found, render_status_page
from chalicelib.templates.engine import CompactHtml, autoescape_for

ROOT = Path(__file__).resolve().parents[2]
EVIL = '<script>alert("x")</script>'
ESCAPED = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"
AT = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def incident_page(title: str = EVIL, message: str | None = EVIL) -> Notification:
    return Notification("INC-2026-0001", title, "SEV1", "high", message, "https://tocsin.example/i/1?a=1&b=2", AT)


def disabled_notice() -> webhook_notice.DisabledSubscription:
    return webhook_notice.DisabledSubscription("whs_1", f"https://hooks.example/{EVIL}", EVIL, 5, EVIL, AT)


def status_page(component_name: str, incident_title: str) -> str:
    return render_status_page(
        summary={"page": {"name": "Demo"}, "status": "operational", "updated_at": "2026-11-22T11:58:00Z"},
        components={"sections": [{"name": "Core", "components": [{"name": component_name, "status": "operational"}]}]},
        incidents=[{"title": incident_title, "status": "identified", "impact": "minor", "updates": []}],
        maintenance=[],
        now=AT,
    )


# --- autoescape in every HTML template ----------------------------------------------------------


def test_status_page_escapes_a_component_name_and_an_incident_title() -> None:
    markup = status_page(component_name=EVIL, incident_title="Fine")
    assert "<script" not in markup and f'<span class="name">{ESCAPED}</span>' in markup
    markup = status_page(component_name="API", incident_title=EVIL)
    assert "<script" not in markup and f"<h3>{ESCAPED}</h3>" in markup


def test_not_found_page_escapes_the_slug() -> None:
    assert ESCAPED in render_not_found(EVIL) and "<script" not in render_not_found(EVIL)


def test_error_page_escapes_the_message() -> None:
    markup = render_error("Status page unavailable", f"Bad cursor {EVIL}")
    assert "<script" not in markup and f"<p>Bad cursor {ESCAPED}</p>" in markup


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("impact", {"duration": EVIL}, f"<dd>{ESCAPED}</dd>"),
        ("response_timeline", {"time_to_resolve": EVIL}, f"<dd>{ESCAPED}</dd>"),
        ("timeline", [{"timestamp": "10:00", "description": EVIL}], f"</time> {ESCAPED}</li>"),
        ("action_items", [{"text": EVIL, "status": "pending"}], f'<span class="text">{ESCAPED}</span>'),
    ],
)
def test_every_postmortem_rendering_escapes_its_fields(field: str, value: object, expected: str) -> None:
    html = rules.rendered_html(field, value)
    assert html is not None and expected in html and "<script" not in html


def test_incident_email_html_escapes_the_title_message_and_url() -> None:
    html = email_ses.render(incident_page(), Recipient("u", EVIL, "a@example.com", None), settings=get_settings()).html
    assert "<script" not in html
    assert f"<h2>INC-2026-0001: {ESCAPED}</h2>" in html
    assert f"<p>Hi {ESCAPED},</p>" in html
    assert 'href="https://tocsin.example/i/1?a=1&amp;b=2"' in html


def test_webhook_disabled_email_html_escapes_stored_strings() -> None:
    _, _, html = webhook_notice.render(disabled_notice())
    assert "<script" not in html
    assert f"<p>Last error: {ESCAPED}</p>" in html and f"(https://hooks.example/{ESCAPED})" in html


# --- text parts are plain text ------------------------------------------------------------------


def test_incident_email_text_part_carries_the_values_unescaped() -> None:
    text = email_ses.render(
        incident_page(), Recipient("u", "Ana <Ops>", "a@example.com", None), settings=get_settings()
    ).text
    assert "&lt;" not in text and "&amp;" not in text and "&quot;" not in text
    assert text.startswith("Hi Ana <Ops>,\n\n")
    assert f"INC-2026-0001: {EVIL}\n" in text and f"\n{EVIL}\n" in text
    assert "Open the incident: https://tocsin.example/i/1?a=1&b=2\n" in text
    assert text.endswith("Paged by Tocsin on Sun 22 Nov 2026, 12:00 UTC.\n")


def test_webhook_disabled_text_part_carries_the_values_unescaped() -> None:
    _, text, _ = webhook_notice.render(disabled_notice())
    assert "&lt;" not in text and "&quot;" not in text
    assert f"(https://hooks.example/{EVIL}) at 2026-11-22T12:00:00.000Z:\n" in text
    assert f"Last error: {EVIL}\n" in text
    assert text.endswith('/api/v1/webhook-subscriptions/whs_1 with {"enabled": true}.\n')


def test_the_environment_decides_escaping_by_file_name() -> None:
    assert autoescape_for("email/x.html") is True
    assert autoescape_for("email/x.txt") is False
    # The status page's feeds (issue 18) are XML, escaped like HTML.
    assert autoescape_for("statuspage/feed_atom.xml") is True
    with pytest.raises(ValueError, match=r"\.html or \.xml \(escaped\) or \.txt"):
        autoescape_for("email/x.json")


# --- strictness ---------------------------------------------------------------------------------


def test_a_missing_variable_fails_instead_of_rendering_empty() -> None:
    with pytest.raises(jinja2.UndefinedError, match="events"):
        templates.render("postmortem/timeline.html")
    with pytest.raises(jinja2.UndefinedError, match="recipient_name"):
        templates.render(
            "email/incident_page.txt",
            **{key: "x" for key in ("incident_number", "title", "severity", "urgency", "message", "url", "paged_at")},
        )


def test_a_missing_attribute_of_a_view_object_fails() -> None:
    with pytest.raises(jinja2.UndefinedError, match="status"):
        templates.render("postmortem/action_items.html", items=[{"text": "t", "owner_email": None, "due_date": None}])


def test_every_template_file_compiles_and_is_html_or_text() -> None:
    known = {".html", ".xml", ".txt", ".py", ".pyc"}
    others = {path.suffix for path in templates.TEMPLATE_DIRECTORY.rglob("*.*")} - known
    assert others == set(), "a template is .html or .xml (escaped) or .txt (plain text)"
    names = templates.environment().list_templates(extensions=["html", "xml", "txt"])
    assert {"statuspage/page.html", "postmortem/timeline.html", "email/incident_page.txt"} <= set(names)
    assert {"statuspage/feed_atom.xml", "statuspage/feed_rss.xml"} <= set(names)
    for name in names:
        templates.environment().get_template(name)


def test_the_environment_is_built_once() -> None:
    assert templates.environment() is templates.environment()


def test_line_breaks_between_tags_are_dropped_in_html_only() -> None:
    source = "<ul>\n  {% for x in xs %}\n    <li>{{ x }}</li>\n  {% endfor %}\n</ul>\n<p>two\n  lines</p>\n"
    compact = CompactHtml(templates.environment())
    assert compact.preprocess(source, "a.html") == (
        "<ul>{% for x in xs %}<li>{{ x }}</li>{% endfor %}</ul><p>two\n  lines</p>"
    )
    assert compact.preprocess(source, "a.txt") == source


# --- Jinja2 is loaded by a rendering, not by an import -------------------------------------------


def _modules_after(statement: str) -> set[str]:
    script = f"import json, sys; {statement}; print(json.dumps(sorted(sys.modules)))"
    environment = {**os.environ, "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    return set(json.loads(completed.stdout.strip().splitlines()[-1]))


def test_rendering_modules_import_without_jinja2_and_load_it_on_first_render() -> None:
    imports = (
        "import chalicelib.statuspage.page_html, chalicelib.postmortem.rules, "
        "chalicelib.notification.email_ses, chalicelib.notification.webhook_notice, "
        "chalicelib.api.routes.public_status"
    )
    assert {"jinja2", "markupsafe"}.isdisjoint(_modules_after(imports))
    rendered = _modules_after(f"{imports}; chalicelib.postmortem.rules.render_timeline([])")
    assert {"jinja2", "markupsafe"} <= rendered
