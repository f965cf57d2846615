"""Status pages: one partition per page, so a public read is a Query or two.

Partition `page_id`; sort key `item_key`:
- `A#PAGE` the page, `A#SEC#<id>` sections, `A#GRP#<id>` groups, `A#CMP#<id>` components:
  the page's whole structure is one Query (begins_with `A#`), however long its history;
- `INC#<id>` public incidents and `MNT#<id>` maintenance windows; ids sort by creation time,
  so a descending Query lists newest first and its LastEvaluatedKey is the next cursor;
- `HIST#<ISO time>#<hst id>` component history (chalicelib/statuspage/history.py): a status
  change or a maintenance window beginning/stopping to hold a component, written in the same
  transaction as the change; time first, so the last 90 days of every component are one Query;
- `TPL#<id>` incident templates (name, title, body, optional status and impact, component
  statuses): never public, read by the manager routes and when an incident or update names one.
Slug guards live in their own partition `SLUG#<slug>` (sort key `A#SLUG`): the slug is the
public URL, globally unique, claimed with a conditional put in the page's transaction.

Sparse indexes (only some items carry the key attributes):
- `organization-index`: the page item alone carries `organization_id` -> list an org's pages;
- `active-index`: active incidents and in-progress windows carry `active_key` -> the summary's
  counts and the components' maintenance state, without reading history;
- `due-index`: scheduled and in-progress windows carry `due_shard` + `due_at` (their next
  transition time) -> the scheduler's Query for windows that are due.
"""

from __future__ import annotations

from pynamodb.attributes import (
    JSONAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
    VersionAttribute,
)
from pynamodb.indexes import GlobalSecondaryIndex

from chalicelib import aws
from chalicelib.store.indexes import global_index
from chalicelib.store.model import TocsinModel

STRUCTURE_PREFIX = "A#"
PAGE_KEY = "A#PAGE"
SECTION_PREFIX = "A#SEC#"
GROUP_PREFIX = "A#GRP#"
COMPONENT_PREFIX = "A#CMP#"
INCIDENT_PREFIX = "INC#"
MAINTENANCE_PREFIX = "MNT#"
HISTORY_PREFIX = "HIST#"
TEMPLATE_PREFIX = "TPL#"
TEMPLATE_COUNTER_KEY = "TPLCOUNT"  # the page's count of templates (outside the TPL# prefix its list queries)
SLUG_KEY = "A#SLUG"
DUE_SHARD = "maintenance"


def slug_partition(slug: str) -> str:
    return f"SLUG#{slug}"


@aws.register_model
class StatusPageItem(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "status-pages"

    page_id = UnicodeAttribute(hash_key=True)
    item_key = UnicodeAttribute(range_key=True)

    # Index keys (sparse: set only on the items that belong in the index).
    organization_id = UnicodeAttribute(null=True)
    active_key = UnicodeAttribute(null=True)
    due_shard = UnicodeAttribute(null=True)
    due_at = UnicodeAttribute(null=True)

    name = UnicodeAttribute(null=True)  # page, section, group, component, template; title of incidents/windows
    slug = UnicodeAttribute(null=True)  # page and slug guard
    owner_page_id = UnicodeAttribute(null=True)  # slug guard: the page holding the slug
    section_id = UnicodeAttribute(null=True)  # group, component
    group_id = UnicodeAttribute(null=True)  # component
    status = UnicodeAttribute(null=True)  # component, incident, window; template (optional)
    impact = UnicodeAttribute(null=True)  # incident; template (optional)
    started_at = UTCDateTimeAttribute(null=True)  # incident
    resolved_at = UTCDateTimeAttribute(null=True)  # incident
    incident_number = UnicodeAttribute(null=True)  # incident: the linked internal incident (never public)
    updates = JSONAttribute(null=True)  # incident: [{status, body, published_at}], oldest first
    scheduled_start = UTCDateTimeAttribute(null=True)  # window; history (maintenance): the window's start
    scheduled_end = UTCDateTimeAttribute(null=True)  # window
    component_ids = JSONAttribute(null=True)  # incident, window: affected; history (maintenance): held
    change = UnicodeAttribute(null=True)  # history: "status", "maintenance_began", "maintenance_ended"
    component_id = UnicodeAttribute(null=True)  # history (status change): the component
    previous_status = UnicodeAttribute(null=True)  # history (status change): the status before; none at creation
    maintenance_id = UnicodeAttribute(null=True)  # history (maintenance): the window
    component_ids = JSONAttribute(null=True)  # incident, window: affected components
    title = UnicodeAttribute(null=True)  # template: the incident's title
    body = UnicodeAttribute(null=True)  # template: the update's message
    component_statuses = JSONAttribute(null=True)  # template: {component id: status}
    template_count = NumberAttribute(null=True)  # the template counter item: templates the page has
    created_at = UTCDateTimeAttribute(null=True)
    updated_at = UTCDateTimeAttribute(null=True)
    version = VersionAttribute()

    organization_index: GlobalSecondaryIndex[StatusPageItem] = global_index(
        "organization-index", "organization_id", "page_id"
    )
    active_index: GlobalSecondaryIndex[StatusPageItem] = global_index("active-index", "page_id", "active_key")
    # due_at: <ISO time>#<page_id>#<maintenance_id>
    due_index: GlobalSecondaryIndex[StatusPageItem] = global_index("due-index", "due_shard", "due_at", keys_only=True)
