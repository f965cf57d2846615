"""Which AWS operations the deployed code can make, found statically in its source.

Only modules the Lambda handler can reach are read: imports are followed from app.py (top-level
and function-level, `chalicelib.*` only), so the local stack, the admin CLI and this package
do not count. Inside them:

- PynamoDB: `Model.get/query/scan/batch_get/batch_write/exists/...` on a model class (or an
  index of one), and the instance or transaction methods `save`, `update` (with actions or
  a condition; `dict.update` never has them), `delete`, `refresh`, `condition_check`;
  `connection.query(...)`; `TransactGet(...)`.
- boto3: `aws.client("sqs").send_message(...)`, or a name bound to `aws.client("...")` in the
  same function; the method is mapped to its API operation through botocore's service model.

`iam_actions` turns operations into the IAM actions they need (a TransactWriteItems needs the
actions of its parts, which the scan finds as `save`/`update`/`delete`/`condition_check`).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

from chalicelib.deploy.source_trees import parsed
from chalicelib.deploy.stages import ROOT

ENTRY = "app"

# Class-level PynamoDB calls: Model.<method>(...) or Model.<index>.<method>(...)
MODEL_METHODS = {
    "get": "GetItem",
    "batch_get": "BatchGetItem",
    "batch_write": "BatchWriteItem",
    "query": "Query",
    "scan": "Scan",
    "count": "Query",
    "exists": "DescribeTable",
    "describe_table": "DescribeTable",
    "create_table": "CreateTable",
    "delete_table": "DeleteTable",
    "update_ttl": "UpdateTimeToLive",
}
INDEX_METHODS = {"query", "scan", "count"}
# Instance and transaction calls: no builtin type has these methods.
ITEM_METHODS = {
    "save": "PutItem",
    "delete": "DeleteItem",
    "refresh": "GetItem",
    "condition_check": "ConditionCheckItem",
}
DYNAMODB_KEYWORDS = {"actions", "condition"}
CLIENT_FACTORIES = {"client"}  # aws.client("svc") / client("svc")


@dataclass(frozen=True, order=True)
class AwsCall:
    service: str
    operation: str
    where: str  # path:line


def module_path(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] == "chalicelib"}


def reachable_modules(entry: str = ENTRY) -> dict[str, Path]:
    """Every chalicelib module importable from `entry` (packages' __init__ included)."""
    seen: dict[str, Path] = {}
    pending = [entry]
    while pending:
        module = pending.pop()
        if module in seen:
            continue
        path = module_path(module)
        if path is None:
            continue  # an attribute imported from a module, not a module
        seen[module] = path
        parts = module.split(".")
        pending.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        pending.extend(_imports(parsed(path)))
    return seen


def _model_classes(trees: list[ast.AST]) -> set[str]:
    """Names of PynamoDB model classes (subclasses of Model or of another model), statically."""
    bases: dict[str, set[str]] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
    models = {"Model"}
    changed = True
    while changed:
        changed = False
        for name, parents in bases.items():
            if name not in models and parents & models:
                models.add(name)
                changed = True
    return models - {"Model"}


@functools.cache
def _operation_names(service: str) -> dict[str, str]:
    """boto3 method name -> API operation name, from botocore's service model."""
    import botocore.session
    from botocore import xform_name

    model = botocore.session.get_session().get_service_model(service)
    return {xform_name(name): name for name in model.operation_names}


def _client_service(node: ast.expr) -> str | None:
    """`aws.client("sqs")` / `client("sqs")` -> "sqs"."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    first = node.args[0]
    if name in CLIENT_FACTORIES and isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


class _Scanner(ast.NodeVisitor):
    def __init__(self, where: str, models: set[str]) -> None:
        self.where = where
        self.models = models
        self.calls: list[AwsCall] = []
        self.client_names: list[dict[str, str]] = [{}]

    def _add(self, service: str, operation: str, node: ast.AST) -> None:
        self.calls.append(AwsCall(service, operation, f"{self.where}:{getattr(node, 'lineno', 0)}"))

    def _scoped(self, node: ast.AST) -> None:
        self.client_names.append({})
        self.generic_visit(node)
        self.client_names.pop()

    visit_FunctionDef = _scoped
    visit_AsyncFunctionDef = _scoped
    visit_Lambda = _scoped

    def visit_Assign(self, node: ast.Assign) -> None:
        service = _client_service(node.value)
        if service is not None:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.client_names[-1][target.id] = service
        self.generic_visit(node)

    def _bound_client(self, name: str) -> str | None:
        for scope in reversed(self.client_names):
            if name in scope:
                return scope[name]
        return None

    def _is_model(self, node: ast.expr, method: str) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.models
        # Model.index.query(...): an index (a GSI/LSI attribute of the model). Model.attribute.exists()
        # is a condition, not a call.
        return (
            method in INDEX_METHODS
            and isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in self.models
        )

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "TransactGet":
            self._add("dynamodb", "TransactGetItems", node)
        if isinstance(func, ast.Attribute):
            method, receiver = func.attr, func.value
            service = _client_service(receiver)
            if service is None and isinstance(receiver, ast.Name):
                service = self._bound_client(receiver.id)
            if service is not None:
                operation = _operation_names(service).get(method)
                if operation is None:
                    raise ValueError(f"{self.where}:{node.lineno}: {service} has no method {method!r}")
                self._add(service, operation, node)
            elif method in MODEL_METHODS and self._is_model(receiver, method):
                self._add("dynamodb", MODEL_METHODS[method], node)
            elif method == "query":
                self._add("dynamodb", "Query", node)  # Connection.query(...) and index queries
            elif method in ITEM_METHODS:
                self._add("dynamodb", ITEM_METHODS[method], node)
            elif method == "update" and self._is_item_update(node):
                self._add("dynamodb", "UpdateItem", node)
        self.generic_visit(node)

    @staticmethod
    def _is_item_update(node: ast.Call) -> bool:
        if any(k.arg in DYNAMODB_KEYWORDS for k in node.keywords):
            return True
        if len(node.args) >= 2:  # TransactWrite.update(model, actions, ...); dict.update takes one
            return True
        return bool(node.args) and isinstance(node.args[0], ast.List | ast.ListComp)


def find_calls(entry: str = ENTRY) -> list[AwsCall]:
    modules = reachable_modules(entry)
    trees = {name: parsed(path) for name, path in modules.items()}
    models = _model_classes(list(trees.values()))
    calls: list[AwsCall] = []
    for name, tree in sorted(trees.items()):
        scanner = _Scanner(str(modules[name].relative_to(ROOT)), models)
        scanner.visit(tree)
        calls.extend(scanner.calls)
    return sorted(set(calls))


def operations(calls: list[AwsCall]) -> set[tuple[str, str]]:
    return {(c.service, c.operation) for c in calls}


# API operation -> IAM actions. Transactions are authorized per part (AWS: "Using IAM with
# DynamoDB transactions"); there is no dynamodb:TransactWriteItems action.
_ACTION_OVERRIDES = {
    ("dynamodb", "TransactWriteItems"): (),
    ("dynamodb", "TransactGetItems"): ("dynamodb:GetItem",),
}


def iam_actions(service: str, operation: str) -> tuple[str, ...]:
    return _ACTION_OVERRIDES.get((service, operation), (f"{service}:{operation}",))


def required_actions(calls: list[AwsCall]) -> dict[str, list[str]]:
    """IAM action -> where the code needs it."""
    needed: dict[str, list[str]] = {}
    for call in calls:
        for action in iam_actions(call.service, call.operation):
            needed.setdefault(action, []).append(call.where)
    return dict(sorted(needed.items()))
