"""A document that uses every section, for the configuration tests (times after tests.conftest.NOW)."""

from __future__ import annotations

FULL = """\
version: 1
users:
  - email: alice@example.com
    name: Alice
    role: admin
    slack_user_id: U024BE7LH
    contact_methods:
      - {type: sms, address: "+15551234567", label: Mobile}
    notification_rules:
      high:
        - {type: email, address: alice@example.com}
        - {type: sms, address: "+15551234567", delay_minutes: 5}
      low:
        - {type: slack, address: U024BE7LH}
  - email: bob@example.com
    name: Bob
  - email: carol@example.com
    name: Carol
    role: viewer
    active: false
teams:
  - name: Platform
    description: Runs the shop
    members: [alice@example.com, bob@example.com]
schedules:
  - name: Primary
    time_zone: Europe/Berlin
    team: Platform
    handoff_notice_lead_minutes: 30
    layers:
      - name: Weekly
        members: [alice@example.com, bob@example.com]
        rotation: weekly
        handoff_time: "09:00"
        start: 2026-11-02T09:00:00+01:00
      - name: Nights
        members: [bob@example.com]
        rotation: daily
        handoff_time: "18:00"
        start: 2026-11-02T18:00:00+01:00
        restrictions:
          - {kind: daily, start: "18:00", end: "08:00"}
    overrides:
      - {user: bob@example.com, start: 2026-12-01T00:00:00Z, end: 2026-12-02T00:00:00Z}
escalation_policies:
  - name: Default
    repeat_count: 1
    levels:
      - delay_minutes: 10
        targets: [{schedule: Primary}]
      - delay_minutes: 15
        targets: [{user: alice@example.com}]
services:
  - name: Payments
    description: Cards and wallets
    team: Platform
    escalation_policy: Default
    default_severity: SEV2
    urgency_rule:
      type: high
      support_hours: {time_zone: Europe/Berlin, days: [mon, tue, wed, thu, fri], start: "09:00", end: "17:00"}
    alert_grouping: {type: time, window_minutes: 30}
  - name: Web
integrations:
  - name: Prometheus
    type: alertmanager
    service: Payments
    ip_allowlist: [203.0.113.0/24]
  - name: Scripts
    type: custom
    signing: true
event_rules:
  - description: Drop test alerts
    conditions: [{field: labels.env, op: equals, value: test}]
    actions: {drop: true}
  - description: Route checkout
    conditions: [{field: title, op: contains, value: checkout}]
    actions: {route_to_service: Payments, note: Checkout alert}
    continue: true
  - description: Payments are urgent
    integration: Prometheus
    conditions: [{field: service, op: equals, value: Payments}]
    actions: {severity: SEV1}
maintenance_windows:
  - description: Database upgrade
    services: [Payments, Web]
    start: 2026-12-10T00:00:00Z
    end: 2026-12-10T04:00:00Z
heartbeats:
  - name: nightly-backup
    service: Payments
    interval_seconds: 86400
    grace_seconds: 600
    description: The backup job pings when done
status_pages:
  - name: Public
    slug: acme-status
    sections:
      - name: Core
        components: [{name: API}]
        groups:
          - name: Payments
            components: [{name: Checkout}, {name: Wallet}]
    templates:
      - name: Outage
        title: Checkout is down
        body: We are looking into it.
        status: investigating
        impact: major
        component_statuses: {Checkout: major_outage}
"""
