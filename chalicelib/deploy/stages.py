"""What .chalice/config.json says about a stage: its prefixes, Lambda timeout and policy file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHALICE_DIR = ROOT / ".chalice"
CONFIG_FILE = CHALICE_DIR / "config.json"
TEMPLATE_FILE = ROOT / "template" / "resources.json"
DEFAULT_LAMBDA_TIMEOUT = 60  # Chalice's default when the config sets none
# Stages deployed to AWS; `local` and `test` run on the emulator only.
DEPLOY_STAGES = ("dev", "prod")


class StageError(Exception):
    """A stage the config cannot deploy (unknown, or missing a setting)."""


@dataclass(frozen=True)
class StageConfig:
    name: str
    table_prefix: str
    queue_prefix: str
    lambda_timeout: int
    policy_file: Path | None

    def parameters(self) -> dict[str, str]:
        """The CloudFormation parameters that must agree with this stage's Lambda environment."""
        return {"Stage": self.name, "TablePrefix": self.table_prefix, "QueuePrefix": self.queue_prefix}


def _load(config_file: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(config_file.read_text())
    return document


def stage_names(config_file: Path = CONFIG_FILE) -> list[str]:
    return sorted(_load(config_file).get("stages", {}))


def stage_config(name: str, config_file: Path = CONFIG_FILE) -> StageConfig:
    document = _load(config_file)
    stages = document.get("stages", {})
    if name not in stages:
        raise StageError(f"stage {name!r} is not in {config_file.name} (stages: {', '.join(sorted(stages))})")
    stage = stages[name]
    environment = {**document.get("environment_variables", {}), **stage.get("environment_variables", {})}
    missing = [key for key in ("TABLE_PREFIX", "QUEUE_PREFIX") if not environment.get(key)]
    if missing:
        raise StageError(f"stage {name!r} sets no {' or '.join(missing)} in {config_file.name}")
    timeout = stage.get("lambda_timeout", document.get("lambda_timeout", DEFAULT_LAMBDA_TIMEOUT))
    policy = stage.get("iam_policy_file", document.get("iam_policy_file"))
    return StageConfig(
        name=name,
        table_prefix=str(environment["TABLE_PREFIX"]),
        queue_prefix=str(environment["QUEUE_PREFIX"]),
        lambda_timeout=int(timeout),
        policy_file=config_file.parent / policy if policy else None,
    )
