"""The text rule of request strings (chalicelib.model_base.SingleLine / MultiLine), and that every
string of every request body and query follows it or a stricter pattern."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from chalicelib.model_base import MultiLine, SingleLine, forbidden_character
from tests.model_walk import DOCUMENTATION_ONLY, Leaf, arms, refused_at, request_models

# The fields where a newline belongs (descriptions, bodies, comments, messages, postmortem prose);
# every other string is one line.
MULTI_LINE = {
    ("ServiceCreate", "description"),
    ("ServicePatch", "description"),
    ("TeamCreate", "description"),
    ("TeamPatch", "description"),
    ("IncidentCreate", "description"),
    ("IncidentUpdate", "description"),
    ("StatusChange", "comment"),
    ("CommentCreate", "comment"),
    ("PageRequest", "message"),
    ("SubscriptionCreate", "description"),
    ("SubscriptionPatch", "description"),
    ("TimelineEventV1", "description"),
    ("ActionItemV1", "text"),
    ("IncidentUpdateCreate", "body"),
    *(
        (model, field)
        for model in ("PostmortemCreate", "PostmortemPatch", "PostmortemImport")
        for field in (
            "summary",
            "root_cause",
            "resolution",
            "contributing_factors",
            "detection_path",
            "monitoring_gaps",
            "five_whys",
            "executive_summary",
            "prevented_recurrence",
            "impact_html",
            "timeline_html",
            "action_items_html",
            "response_timeline_html",
            # A legacy import's rich fields are HTML strings.
            "impact",
            "timeline",
            "action_items",
            "response_timeline",
        )
    ),
}
MULTI_LINE.add(("StatusIncidentCreate", "body"))
MULTI_LINE |= {("TemplateCreate", "body"), ("TemplatePatch", "body")}
MULTI_LINE |= {("MaintenanceWindowCreate", "description"), ("MaintenanceWindowPatch", "description")}
MULTI_LINE.update({("HeartbeatCreate", "description"), ("HeartbeatPatch", "description")})
MULTI_LINE |= {("EventRuleCreate", "description"), ("EventRulePatch", "description"), ("ActionsIn", "note")}


def leaves(model: type[BaseModel], text: str, seen: frozenset[type] = frozenset()) -> Iterator[Leaf]:
    """(model, field, location, document) for every string a document of `model` can hold."""
    for name, field in model.model_fields.items():
        for value, location, owner, leaf in _values(field.annotation, text, seen | {model}):
            yield (owner or model.__qualname__, leaf or name, (name, *location), {name: value})


def _values(annotation: Any, text: str, seen: frozenset[type]) -> Iterator[tuple[Any, tuple[Any, ...], str, str]]:
    for arm in arms(annotation):
        origin = typing.get_origin(arm)
        if arm is str:
            yield text, (), "", ""
        elif origin in (list, tuple, set, frozenset):
            for value, location, owner, leaf in _values(typing.get_args(arm)[0], text, seen):
                yield [value], (0, *location), owner, leaf
        elif origin is dict:
            for value, location, owner, leaf in _values(typing.get_args(arm)[1], text, seen):
                yield {"k": value}, ("k", *location), owner, leaf
        elif isinstance(arm, type) and issubclass(arm, BaseModel) and arm not in seen:
            for owner, leaf, location, document in leaves(arm, text, seen):
                yield document, location, owner, leaf


MODELS = request_models(exclude=DOCUMENTATION_ONLY)


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__qualname__)
@pytest.mark.parametrize("bad", ["\x00", "\u202e", "\u2066", "\x7f", "\x85", "\ufeff", "\u200b"])
def test_every_request_string_refuses_controls_and_bidi_overrides(model: type[BaseModel], bad: str) -> None:
    # Issue #13: NUL and U+202E were stored and rendered raw in names, titles and status updates.
    # Long enough for every minimum length, so only the character can be what is refused.
    for owner, field, location, document in leaves(model, f"checkout{bad}db"):
        assert refused_at(model, document, location), (owner, field, repr(bad))


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__qualname__)
def test_newlines_only_in_multi_line_fields(model: type[BaseModel]) -> None:
    for owner, field, location, document in leaves(model, "first line\nsecond"):
        assert refused_at(model, document, location) != ((owner, field) in MULTI_LINE), (owner, field)


# --- the rule itself -------------------------------------------------------------------------------


class Sample(BaseModel):
    line: typing.Annotated[str, SingleLine] = ""
    text: typing.Annotated[str, MultiLine] = ""


@pytest.mark.parametrize(
    "kept",
    [
        "Checkout \u00e9chou\u00e9 \u2014 \u65e5\u672c",
        "tab\tseparated",
        "\U0001f468\u200d\U0001f469\u200d\U0001f467 family",  # zero-width joiner: emoji sequences
        "\u05e9\u05dc\u05d5\u05dd\u200f (RLM)",  # directional marks, needed in right-to-left text
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # zero-width non-joiner: Persian
        "soft\u00adhyphen",
        "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",  # tag characters: a flag
    ],
)
def test_ordinary_text_is_kept(kept: str) -> None:
    assert Sample(line=kept, text=kept).line == kept


@pytest.mark.parametrize(
    ("value", "named"),
    [("a\x00", "U+0000"), ("\u202egnp.exe", "U+202E"), ("x\u2069", "U+2069"), ("\x9b", "U+009B"), ("\ufffe", "U+FFFE")],
)
def test_the_error_names_the_character(value: str, named: str) -> None:
    assert forbidden_character(value, multiline=True) == named
    with pytest.raises(ValidationError) as caught:
        Sample(text=value)
    [problem] = caught.value.errors()
    assert problem["loc"] == ("text",) and named in problem["msg"]


def test_line_breaks_are_normalized_in_multi_line_text_and_refused_in_a_line() -> None:
    assert Sample(text="a\r\nb\rc\u2028d").text == "a\nb\nc\nd"
    for value in ("a\nb", "a\rb", "a\u2028b", "a\u2029b"):
        with pytest.raises(ValidationError, match="one line"):
            Sample(line=value)
