"""The plain part of the merge template: what deploys without `chalice package` around it.

The merge template patches resources only Chalice's output defines (the functions, by logical
id, and RestAPI); `plain_part` drops those patches and whatever points at Chalice's resources,
leaving plain CloudFormation that CloudFormation (or moto's) can deploy on its own.
"""

from __future__ import annotations

import copy
import re
from typing import Any

PSEUDO_PARAMETERS = {
    "AWS::AccountId",
    "AWS::NoValue",
    "AWS::NotificationARNs",
    "AWS::Partition",
    "AWS::Region",
    "AWS::StackId",
    "AWS::StackName",
    "AWS::URLSuffix",
}
_SUB_NAME = re.compile(r"\$\{([A-Za-z0-9]+)(?:\.[A-Za-z0-9.]+)?\}")


def references(value: Any) -> set[str]:
    """Logical ids (and parameters) a template fragment points at via Ref, Fn::GetAtt or Fn::Sub."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "Ref" and isinstance(item, str):
                found.add(item)
            elif key == "Fn::GetAtt":
                target = item[0] if isinstance(item, list) else str(item).split(".")[0]
                found.add(str(target))
            elif key == "Fn::Sub":
                text = item[0] if isinstance(item, list) else item
                found.update(_SUB_NAME.findall(str(text)))
                if isinstance(item, list):
                    found.update(references(item[1]))
            else:
                found.update(references(item))
    elif isinstance(value, list):
        for item in value:
            found.update(references(item))
    return found


def plain_part(template: dict[str, Any]) -> dict[str, Any]:
    """The template without the function patches and what points at Chalice's resources: what
    CloudFormation (or moto) can deploy with no `chalice package` around it."""
    plain = copy.deepcopy(template)
    resources = plain["Resources"]
    defined = set(resources) | set(plain.get("Parameters", {})) | PSEUDO_PARAMETERS
    # Function patches, and resources pointing at what only `chalice package` defines (RestAPI).
    removed = {
        logical_id
        for logical_id, body in resources.items()
        if "Type" not in body or {r.split(".")[0] for r in references(body)} - defined
    }
    changed = True
    while changed:
        changed = False
        for logical_id, body in list(resources.items()):
            if logical_id in removed:
                continue
            if references(body) & removed:
                removed.add(logical_id)
                changed = True
    for logical_id in removed:
        resources.pop(logical_id, None)
    plain["Outputs"] = {k: v for k, v in plain.get("Outputs", {}).items() if not references(v) & removed}
    # Parameters and conditions only the patches used (a condition is named by `Condition` or Fn::If).
    used = references([resources, plain["Outputs"]])
    conditions = plain.get("Conditions", {})
    used_conditions = set(_conditions_named([resources, plain["Outputs"]]))
    plain["Conditions"] = {name: body for name, body in conditions.items() if name in used_conditions}
    used |= references(plain["Conditions"])
    plain["Parameters"] = {name: body for name, body in plain.get("Parameters", {}).items() if name in used}
    return plain


def _conditions_named(value: Any) -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "Condition" and isinstance(item, str):
                found.append(item)
            elif key == "Fn::If" and isinstance(item, list) and item:
                found.append(str(item[0]))
            found.extend(_conditions_named(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(_conditions_named(item))
    return found
