"""The base of every PynamoDB table model."""

from __future__ import annotations

from pynamodb.models import Model


class TocsinModel(Model):
    """Base for every table: on-demand billing; name and endpoint bound lazily by aws.bind_tables."""

    class Meta:
        billing_mode = "PAY_PER_REQUEST"
