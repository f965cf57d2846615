"""docs/INTAKE.md says what the code does: its severity table is the code's, its Alertmanager
configuration passes the real `amtool check-config`, and its Watchdog rule drops a real Watchdog."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from chalicelib.alert.repository import labels_of
from chalicelib.eventrule.evaluate import evaluate
from chalicelib.eventrule.facts import AlertFacts
from chalicelib.eventrule.rules import Actions, Rule, check_conditions
from chalicelib.integration.parsers.alertmanager import parse_alertmanager
from chalicelib.severity import SEVERITY_WORDS, word_key

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "INTAKE.md").read_text()
CREATED = datetime(2026, 11, 22, tzinfo=UTC)
WATCHDOG = ROOT / "tests" / "unit" / "fixtures" / "integration" / "alertmanager_watchdog.json"


def block_after(marker: str) -> str:
    """The fenced block that follows an HTML comment marker."""
    rest = DOC.split(f"<!-- {marker}", 1)[1]
    return rest.split("```", 2)[1].split("\n", 1)[1]


def test_the_severity_table_is_the_code_s():
    rest = DOC.split("<!-- severity-table", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| (\S[^|]*?) \| (SEV[0-4]) \|$", rest, re.MULTILINE)
    assert {word_key(word): severity for word, severity in rows} == dict(SEVERITY_WORDS)


def test_the_alertmanager_configuration_passes_amtool(tmp_path: Path):
    amtool = shutil.which("amtool")
    if amtool is None:
        if os.environ.get("CI"):
            pytest.fail("amtool is not installed (apt-get install prometheus-alertmanager); required in CI")
        pytest.skip("amtool is not installed (apt-get install prometheus-alertmanager)")
    config = tmp_path / "alertmanager.yml"
    config.write_text(block_after("alertmanager-config"))
    checked = subprocess.run([amtool, "check-config", str(config)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS" in checked.stdout and "2 receivers" in checked.stdout


def test_the_documented_watchdog_rule_drops_a_real_watchdog():
    rule_json = DOC.split("an event rule on its label drops it", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    body = json.loads(rule_json)
    conditions = check_conditions([(c["field"], c["op"], c.get("value")) for c in body["conditions"]])
    rule = Rule("r1", conditions, Actions(**body["actions"]), False, None, 1, CREATED)
    alert = parse_alertmanager(WATCHDOG.read_bytes())
    facts = AlertFacts(
        title=alert.title,
        source=alert.source,
        severity=alert.severity,
        service_id="SER-00001",
        integration_type="alertmanager",
        labels=labels_of(alert.metadata),
    )
    assert evaluate([[rule]], facts).dropped is True
    title_rule = Rule(
        "r2", check_conditions([("title", "contains", "Watchdog")]), Actions(drop=True), False, None, 1, CREATED
    )
    assert evaluate([[title_rule]], facts).dropped is False  # why the demo's old rule let it page
