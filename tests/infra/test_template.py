"""template/resources.json against the code: the committed file is the generated one, and every
table, index, TTL, queue, alarm and function patch matches what the models, queues and the
Chalice app define. No AWS, no emulator."""

from __future__ import annotations

from typing import Any

import pytest
from pynamodb.attributes import TTLAttribute

from chalicelib.deploy import __main__ as deploy_cli
from chalicelib.deploy.definitions import API_HANDLER, function_definitions
from chalicelib.deploy.plain import plain_part, references
from chalicelib.deploy.stages import DEPLOY_STAGES, TEMPLATE_FILE, stage_config
from chalicelib.deploy.template import build_template, render
from chalicelib.queue.messages import DLQ_SUFFIX, MAX_RECEIVE_COUNT, QUEUES
from chalicelib.table_registry import all_models
from tests.infra.stack import committed_template

TEMPLATE = committed_template()
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]


def of_type(kind: str) -> dict[str, Any]:
    return {name: body for name, body in RESOURCES.items() if body.get("Type") == kind}


def short_table_name(body: dict[str, Any]) -> str:
    name = body["Properties"]["TableName"]["Fn::Sub"]
    assert name.startswith("${TablePrefix}"), name
    return str(name.removeprefix("${TablePrefix}"))


TABLES = {short_table_name(body): body["Properties"] for body in of_type("AWS::DynamoDB::Table").values()}
OWNERS = [m for m in all_models() if not getattr(m.Meta, "provisioned_by", None)]
GUESTS = [m for m in all_models() if getattr(m.Meta, "provisioned_by", None)]


def test_committed_template_is_the_generated_one() -> None:
    assert TEMPLATE_FILE.read_text() == render(build_template()), (
        "template/resources.json is stale: python -m chalicelib.deploy template > template/resources.json"
    )
    assert deploy_cli.stale_files(DEPLOY_STAGES) == []


def test_template_is_plain_cloudformation() -> None:
    assert "Transform" not in TEMPLATE
    types = {body.get("Type") for body in RESOURCES.values()}
    assert not {t for t in types if t and t.startswith("AWS::Serverless::")}
    # The only untyped resources are patches of functions `chalice package` emits.
    assert {name for name, body in RESOURCES.items() if "Type" not in body} == {
        f.logical_id for f in function_definitions()
    }


def test_one_table_per_provisioning_model_and_nothing_else() -> None:
    assert sorted(TABLES) == sorted(m.Meta.short_name for m in OWNERS)  # type: ignore[attr-defined]
    for guest in GUESTS:
        assert guest.Meta.short_name in TABLES  # type: ignore[attr-defined]


def _keys(schema: list[dict[str, str]]) -> dict[str, str]:
    return {k["KeyType"]: k["AttributeName"] for k in schema}


def _types(properties: dict[str, Any]) -> dict[str, str]:
    return {a["AttributeName"]: a["AttributeType"] for a in properties["AttributeDefinitions"]}


def _attribute_type(model: Any, name: str) -> str:
    return {"S": "S", "N": "N", "B": "B"}[model.get_attributes()[name].attr_type]


@pytest.mark.parametrize("model", OWNERS + GUESTS, ids=lambda m: m.__name__)
def test_table_keys_match_the_model(model: Any) -> None:
    properties = TABLES[model.Meta.short_name]
    expected = {"HASH": model._hash_keyname}
    if model._range_keyname:
        expected["RANGE"] = model._range_keyname
    assert _keys(properties["KeySchema"]) == expected
    assert properties["KeySchema"][0]["KeyType"] == "HASH"  # DynamoDB wants the hash key first
    for name in expected.values():
        assert _types(properties)[name] == _attribute_type(model, name)


def _model_indexes(model: Any) -> dict[str, tuple[str, Any]]:
    from pynamodb.indexes import GlobalSecondaryIndex, LocalSecondaryIndex

    found = {}
    for index in model._indexes.values():
        kind = "GSI" if isinstance(index, GlobalSecondaryIndex) else "LSI"
        assert isinstance(index, GlobalSecondaryIndex | LocalSecondaryIndex)
        found[index.Meta.index_name] = (kind, index)
    return found


@pytest.mark.parametrize("model", OWNERS, ids=lambda m: m.__name__)
def test_indexes_match_the_model(model: Any) -> None:
    properties = TABLES[model.Meta.short_name]
    declared = {i["IndexName"]: ("GSI", i) for i in properties.get("GlobalSecondaryIndexes", [])}
    declared |= {i["IndexName"]: ("LSI", i) for i in properties.get("LocalSecondaryIndexes", [])}
    indexes = _model_indexes(model)
    assert sorted(declared) == sorted(indexes)
    for name, (kind, index) in indexes.items():
        declared_kind, body = declared[name]
        assert declared_kind == kind, name
        hash_key = next(a.attr_name for a in index.Meta.attributes.values() if a.is_hash_key)
        range_keys = [a.attr_name for a in index.Meta.attributes.values() if a.is_range_key]
        expected = {"HASH": hash_key, **({"RANGE": range_keys[0]} if range_keys else {})}
        assert _keys(body["KeySchema"]) == expected, name
        assert body["KeySchema"][0]["KeyType"] == "HASH"
        projection = index.Meta.projection
        assert body["Projection"]["ProjectionType"] == projection.projection_type, name
        assert sorted(body["Projection"].get("NonKeyAttributes", [])) == sorted(
            getattr(projection, "non_key_attributes", None) or []
        )
        for attribute in index.Meta.attributes.values():
            assert _types(properties)[attribute.attr_name] == {"S": "S", "N": "N", "B": "B"}[attribute.attr_type]
        if kind == "LSI":
            assert expected["HASH"] == model._hash_keyname  # an LSI shares the table's partition key


@pytest.mark.parametrize("model", OWNERS, ids=lambda m: m.__name__)
def test_only_key_attributes_are_defined(model: Any) -> None:
    """CloudFormation rejects attribute definitions no key or index uses."""
    properties = TABLES[model.Meta.short_name]
    used = {k["AttributeName"] for k in properties["KeySchema"]}
    for index in properties.get("GlobalSecondaryIndexes", []) + properties.get("LocalSecondaryIndexes", []):
        used |= {k["AttributeName"] for k in index["KeySchema"]}
    assert set(_types(properties)) == used


@pytest.mark.parametrize("model", OWNERS, ids=lambda m: m.__name__)
def test_ttl_billing_recovery_and_deletion_protection(model: Any) -> None:
    properties = TABLES[model.Meta.short_name]
    ttl = [a.attr_name for a in model.get_attributes().values() if isinstance(a, TTLAttribute)]
    if ttl:
        assert properties["TimeToLiveSpecification"] == {"AttributeName": ttl[0], "Enabled": True}
    else:
        assert "TimeToLiveSpecification" not in properties
    assert properties["BillingMode"] == "PAY_PER_REQUEST" == model.Meta.billing_mode
    assert "ProvisionedThroughput" not in properties
    assert properties["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert properties["DeletionProtectionEnabled"] == {"Fn::If": ["IsProd", True, False]}
    assert TEMPLATE["Conditions"]["IsProd"] == {"Fn::Equals": [{"Ref": "Stage"}, "prod"]}


def test_ttl_tables_are_the_ones_the_design_names() -> None:
    """Idempotency records, dedup keys and rate-limit windows expire (docs/ARCHITECTURE.md, "Storage")."""
    with_ttl = {name for name, p in TABLES.items() if "TimeToLiveSpecification" in p}
    assert {"idempotency", "alert-dedup", "rate-limits"} <= with_ttl


def test_every_queue_has_a_dead_letter_queue_redrive_and_alarm() -> None:
    queues = of_type("AWS::SQS::Queue")
    names = {body["Properties"]["QueueName"]["Fn::Sub"]: logical for logical, body in queues.items()}
    assert sorted(names) == sorted(
        ["${QueuePrefix}" + q for q in QUEUES] + ["${QueuePrefix}" + q + DLQ_SUFFIX for q in QUEUES]
    )
    alarms = of_type("AWS::CloudWatch::Alarm")
    for queue in QUEUES:
        main = queues[names["${QueuePrefix}" + queue]]["Properties"]
        dead_letter = names["${QueuePrefix}" + queue + DLQ_SUFFIX]
        assert main["RedrivePolicy"] == {
            "deadLetterTargetArn": {"Fn::GetAtt": [dead_letter, "Arn"]},
            "maxReceiveCount": MAX_RECEIVE_COUNT,
        }
        # AWS: a queue feeding Lambda needs a visibility timeout of at least 6x the function timeout.
        timeouts = [stage_config(s).lambda_timeout for s in DEPLOY_STAGES]
        assert main["VisibilityTimeout"] >= 6 * max(timeouts)
        depth = [
            a["Properties"]
            for a in alarms.values()
            if a["Properties"]["Namespace"] == "AWS/SQS"
            and a["Properties"]["Dimensions"]
            == [{"Name": "QueueName", "Value": {"Fn::GetAtt": [dead_letter, "QueueName"]}}]
        ]
        assert len(depth) == 1, queue
        assert depth[0]["MetricName"] == "ApproximateNumberOfMessagesVisible"
        assert (depth[0]["ComparisonOperator"], depth[0]["Threshold"]) == ("GreaterThanThreshold", 0)
        assert depth[0]["AlarmActions"] == [{"Ref": "AlarmTopic"}]


def test_every_function_has_an_errors_alarm_on_the_alarm_topic() -> None:
    assert of_type("AWS::SNS::Topic").keys() == {"AlarmTopic"}
    alarms = [a["Properties"] for a in of_type("AWS::CloudWatch::Alarm").values()]
    functions = function_definitions()
    assert API_HANDLER in {f.logical_id for f in functions}
    assert "HandleEvents" in {f.logical_id for f in functions}
    for function in functions:
        matching = [
            a
            for a in alarms
            if a["Namespace"] == "AWS/Lambda"
            and a["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": function.logical_id}}]
        ]
        assert len(matching) == 1, function.logical_id
        alarm = matching[0]
        assert (alarm["MetricName"], alarm["Statistic"], alarm["Threshold"]) == ("Errors", "Sum", 0)
        assert alarm["AlarmActions"] == [{"Ref": "AlarmTopic"}]


def test_sqs_event_sources_report_batch_item_failures_from_the_stage_queue() -> None:
    sqs_functions = [f for f in function_definitions() if f.sqs_queue]
    assert sqs_functions
    for function in sqs_functions:
        assert function.event_logical_id is not None
        event = RESOURCES[function.logical_id]["Properties"]["Events"][function.event_logical_id]["Properties"]
        assert event["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
        queue_logical_id = next(
            name
            for name, body in of_type("AWS::SQS::Queue").items()
            if body["Properties"]["QueueName"] == {"Fn::Sub": "${QueuePrefix}" + str(function.sqs_queue)}
        )
        # Chalice writes {"Fn::Sub": "arn:...:tocsin-<queue>"}; the same intrinsic replaces it (E3017 otherwise).
        assert event["Queue"] == {"Fn::Sub": "${" + queue_logical_id + ".Arn}"}


def test_functions_read_names_and_secrets_from_the_stack() -> None:
    for function in function_definitions():
        variables = RESOURCES[function.logical_id]["Properties"]["Environment"]["Variables"]
        assert variables["TABLE_PREFIX"] == {"Ref": "TablePrefix"}
        assert variables["QUEUE_PREFIX"] == {"Ref": "QueuePrefix"}
        assert variables["TOCSIN_STAGE"] == {"Ref": "Stage"}
        for secret in ("API_KEY_HMAC_SECRET", "SECRETS_ENCRYPTION_KEY"):
            assert variables[secret] == {
                "Fn::Sub": "{{resolve:secretsmanager:tocsin/${Stage}:SecretString:" + secret + "}}"
            }
        # Tables exist before the functions that use them.
        tables = {name for name, body in RESOURCES.items() if body.get("Type") == "AWS::DynamoDB::Table"}
        assert tables <= set(RESOURCES[function.logical_id]["DependsOn"])


def test_stage_prefixes_name_every_table_queue_and_topic() -> None:
    for body in RESOURCES.values():
        properties = body.get("Properties", {})
        for key in ("TableName", "QueueName", "TopicName"):
            if key in properties:
                assert references(properties[key]) & {"TablePrefix", "QueuePrefix"}, properties[key]


def test_parameters_come_from_the_chalice_stage() -> None:
    """The prefixes the stack names resources with are the ones config.json gives the code."""
    for name in DEPLOY_STAGES:
        stage = stage_config(name)
        assert stage.table_prefix == f"tocsin-{name}-"
        assert deploy_cli.parameter_overrides(stage) == [
            f"Stage={name}",
            f"TablePrefix={stage.table_prefix}",
            f"QueuePrefix={stage.queue_prefix}",
        ]
    assert TEMPLATE["Parameters"]["Stage"]["AllowedValues"] == list(DEPLOY_STAGES)


def test_plain_part_drops_exactly_the_function_patches_and_their_alarms() -> None:
    plain = plain_part(TEMPLATE)
    dropped = set(RESOURCES) - set(plain["Resources"])
    functions = {f.logical_id for f in function_definitions()}
    # ...and the custom domain's base path mapping, which points at Chalice's RestAPI.
    assert dropped == functions | {f + "ErrorsAlarm" for f in functions} | {"ApiCustomDomainMapping"}
    assert not references(plain["Resources"]) & dropped


def test_custom_domain_is_optional_and_mapped_after_the_api_stage() -> None:
    domain, mapping = RESOURCES["ApiCustomDomain"], RESOURCES["ApiCustomDomainMapping"]
    record = RESOURCES["ApiCustomDomainRecord"]
    assert (domain["Condition"], mapping["Condition"], record["Condition"]) == (
        "HasCustomDomain",
        "HasCustomDomain",
        "HasDnsRecord",
    )
    assert TEMPLATE["Parameters"]["DomainName"]["Default"] == ""
    assert mapping["Properties"]["RestApiId"] == {"Ref": "RestAPI"}
    # SAM's reference to the stage it generates: the mapping waits for the stage (aws/chalice#1735).
    assert mapping["Properties"]["Stage"] == {"Ref": "RestAPI.Stage"}
    for function in function_definitions():
        variables = RESOURCES[function.logical_id]["Properties"]["Environment"]["Variables"]
        assert variables["PUBLIC_BASE_URL"] == {
            "Fn::If": [
                "HasPublicBaseUrl",
                {"Ref": "PublicBaseUrl"},
                {"Fn::If": ["HasCustomDomain", {"Fn::Sub": "https://${DomainName}"}, {"Ref": "AWS::NoValue"}]},
            ]
        }
