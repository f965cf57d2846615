"""Validation of a document before anything is applied: YAML syntax, the published JSON Schema,
the model, then what a schema cannot say (keys unique in their section, references that name
something). Every problem carries its path in the document and, read from a file, its line."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import ValidationError

from chalicelib.client import yamlio
from chalicelib.client.document import SECTIONS, Document, User, json_schema
from chalicelib.client.http import ClientError

Path = tuple[str | int, ...]
# (section, key) -> is there such an object? The planner answers from the organization too.
Known = Callable[[str, str], bool]


@dataclass(frozen=True)
class Problem:
    path: Path
    message: str
    line: int | None = None

    def render(self, filename: str | None = None) -> str:
        where = ".".join(str(part) for part in self.path) or "(document)"
        prefix = f"{filename or '<document>'}:{self.line}: " if self.line is not None else ""
        return f"{prefix}{where}: {self.message}"


class InvalidDocument(ClientError):
    def __init__(self, problems: list[Problem], filename: str | None = None) -> None:
        self.problems = sorted(problems, key=lambda p: (p.line or 0, [str(part) for part in p.path]))
        self.filename = filename
        super().__init__("\n".join(problem.render(filename) for problem in self.problems))


@lru_cache(maxsize=1)
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json_schema())


def _schema_problems(data: Any) -> list[Problem]:
    problems = []
    for error in _validator().iter_errors(data):
        # anyOf (an optional value) reports "not valid under any of the given schemas": name the
        # deepest reason instead, the one about the value itself rather than "not null".
        while error.context:
            error = max(error.context, key=lambda e: (len(e.absolute_path), e.validator != "type"))
        problems.append(Problem(tuple(error.absolute_path), error.message))
    return problems


def _model_problems(error: ValidationError) -> list[Problem]:
    return [Problem(tuple(detail["loc"]), detail["msg"]) for detail in error.errors()]


def parse(text: str, filename: str | None = None) -> tuple[Document, yamlio.Loaded]:
    """The document in `text`; InvalidDocument naming each problem's line."""
    try:
        loaded = yamlio.load(text)
    except yamlio.YamlError as error:
        raise InvalidDocument([Problem((), error.message, error.line)], filename) from None
    problems = _schema_problems(loaded.data)
    document = None
    if not problems:
        try:
            document = Document.model_validate(loaded.data)
        except ValidationError as error:
            problems = _model_problems(error)
    if document is not None:
        problems = check_document(document)
    if problems:
        raise InvalidDocument([with_line(problem, loaded) for problem in problems], filename)
    assert document is not None
    return document, loaded


def with_line(problem: Problem, loaded: yamlio.Loaded | None) -> Problem:
    if loaded is None or problem.line is not None:
        return problem
    return Problem(problem.path, problem.message, loaded.line_of(problem.path))


# --- what the schema cannot say -------------------------------------------------------------------


def check_document(document: Document, known: Known | None = None) -> list[Problem]:
    """Keys unique per section, names unique where they are keys within an object, and every
    reference naming an object: of the document when its section is there, else `known` (offline:
    anything)."""
    problems = list(_unique_keys(document))
    problems += _inner_problems(document)
    problems += check_references(document, known or (lambda section, key: True))
    return problems


def _unique_keys(document: Document) -> Iterator[Problem]:
    for section, model in SECTIONS:
        seen: dict[str, int] = {}
        for index, item in enumerate(document.section(section) or []):
            key = item.key()
            if key in seen:
                yield Problem((section, index), f"a {model.kind} with the same key is item {seen[key]} already")
            seen.setdefault(key, index)


def _duplicates(names: list[str], path: Path, field: str, what: str) -> Iterator[Problem]:
    seen: set[str] = set()
    for index, name in enumerate(names):
        if name.casefold() in seen:
            yield Problem((*path, index, field), f"{what} {name!r} is given twice")
        seen.add(name.casefold())


def _inner_problems(document: Document) -> Iterator[Problem]:
    for index, user in enumerate(document.users or []):
        yield from _user_problems(user, ("users", index))
    for index, team in enumerate(document.teams or []):
        yield from _duplicates(team.members, ("teams", index, "members"), "", "the member")
    for index, page in enumerate(document.status_pages or []):
        path: Path = ("status_pages", index)
        yield from _duplicates([s.name for s in page.sections], (*path, "sections"), "name", "the section")
        yield from _duplicates([t.name for t in page.templates], (*path, "templates"), "name", "the template")
        components: list[str] = []
        for s_index, section in enumerate(page.sections):
            yield from _duplicates(
                [g.name for g in section.groups], (*path, "sections", s_index, "groups"), "name", "the group"
            )
            components += [c.name for c in section.components]
            components += [c.name for group in section.groups for c in group.components]
        seen: set[str] = set()
        for name in components:
            if name.casefold() in seen:
                yield Problem((*path, "sections"), f"the component {name!r} is given twice in the page")
            seen.add(name.casefold())
        for t_index, template in enumerate(page.templates):
            for name in template.component_statuses:
                if name.casefold() not in seen:
                    yield Problem(
                        (*path, "templates", t_index, "component_statuses", name), "no such component in the page"
                    )


def _user_problems(user: User, path: Path) -> Iterator[Problem]:
    if user.contact_methods is None:
        return
    methods = {(m.type, m.address.lower() if m.type == "email" else m.address) for m in user.contact_methods}
    if len(methods) < len(user.contact_methods):
        yield Problem((*path, "contact_methods"), "a (type, address) is given twice")
    methods.add(("email", user.email.lower()))
    if user.slack_user_id:
        methods.add(("slack", user.slack_user_id))
    for urgency in ("high", "low"):
        steps = getattr(user.notification_rules, urgency) if user.notification_rules else []
        for index, step in enumerate(steps):
            address = step.address.lower() if step.type == "email" else step.address
            if (step.type, address) not in methods:
                yield Problem(
                    (*path, "notification_rules", urgency, index),
                    f"no {step.type} contact method {step.address!r} among the user's",
                )


def _references(document: Document) -> Iterator[tuple[Path, str, str]]:
    """(path, section, name) of every reference in the document."""
    for i, team in enumerate(document.teams or []):
        for j, email in enumerate(team.members):
            yield ("teams", i, "members", j), "users", email
    for i, schedule in enumerate(document.schedules or []):
        if schedule.team:
            yield ("schedules", i, "team"), "teams", schedule.team
        for j, layer in enumerate(schedule.layers):
            for k, email in enumerate(layer.members):
                yield ("schedules", i, "layers", j, "members", k), "users", email
        for j, override in enumerate(schedule.overrides or []):
            yield ("schedules", i, "overrides", j, "user"), "users", override.user
    for i, policy in enumerate(document.escalation_policies or []):
        for j, level in enumerate(policy.levels):
            for k, target in enumerate(level.targets):
                where: Path = ("escalation_policies", i, "levels", j, "targets", k)
                if target.user is not None:
                    yield (*where, "user"), "users", target.user
                if target.schedule is not None:
                    yield (*where, "schedule"), "schedules", target.schedule
    for i, service in enumerate(document.services or []):
        if service.team:
            yield ("services", i, "team"), "teams", service.team
        if service.escalation_policy:
            yield ("services", i, "escalation_policy"), "escalation_policies", service.escalation_policy
    for i, integration in enumerate(document.integrations or []):
        if integration.service:
            yield ("integrations", i, "service"), "services", integration.service
    for i, rule in enumerate(document.event_rules or []):
        if rule.integration:
            yield ("event_rules", i, "integration"), "integrations", rule.integration
        if rule.actions.route_to_service:
            yield ("event_rules", i, "actions", "route_to_service"), "services", rule.actions.route_to_service
        for j, condition in enumerate(rule.conditions):
            if condition.field == "service" and condition.value:
                yield ("event_rules", i, "conditions", j, "value"), "services", condition.value
    for i, window in enumerate(document.maintenance_windows or []):
        for j, name in enumerate(window.services):
            yield ("maintenance_windows", i, "services", j), "services", name
    for i, heartbeat in enumerate(document.heartbeats or []):
        yield ("heartbeats", i, "service"), "services", heartbeat.service


SINGULAR = {section: model.kind.replace("_", " ") for section, model in SECTIONS}


def check_references(document: Document, known: Known) -> list[Problem]:
    keys = {
        section: {item.key() for item in (document.section(section) or [])}
        for section, _ in SECTIONS
        if document.section(section) is not None
    }
    problems = []
    for path, section, name in _references(document):
        key = name.casefold()
        found = key in keys[section] if section in keys else known(section, key)
        if not found:
            where = (
                f"the document's {section}"
                if section in keys
                else f"the organization ({section} are not in the document)"
            )
            problems.append(Problem(path, f"no {SINGULAR[section]} {name!r} in {where}"))
    for i, rule in enumerate(document.event_rules or []):
        for j, condition in enumerate(rule.conditions):
            if condition.field == "service" and condition.op != "equals":
                problems.append(Problem(("event_rules", i, "conditions", j, "op"), "the service field takes equals"))
    return problems
