"""Console memberships: which organizations invited a console identity (an email address), and
which of those invitations the person accepted.

Partition `email` (trimmed, lower-cased: the directory's form of it), sort key `organization_id`.
One item per organization that created a directory user with that email; `status` is `invited`
until the person, signed in with their own password, accepts it (`accepted`). No version: every
change is one conditional write on `status` (chalicelib/identity/memberships.py). Sign-in reads the
partition (one Query) to offer the person their organizations and invitations.
"""

from __future__ import annotations

from pynamodb.attributes import UnicodeAttribute, UTCDateTimeAttribute

from chalicelib import aws
from chalicelib.store.model import TocsinModel

INVITED = "invited"
ACCEPTED = "accepted"


@aws.register_model
class ConsoleMembershipRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "console-memberships"

    email = UnicodeAttribute(hash_key=True)
    organization_id = UnicodeAttribute(range_key=True)
    user_id = UnicodeAttribute()  # the directory user the invitation was for
    status = UnicodeAttribute()  # invited | accepted
    invited_at = UTCDateTimeAttribute()
    accepted_at = UTCDateTimeAttribute(null=True)
    notified_at = UTCDateTimeAttribute(null=True)  # the invitation email to an existing identity went out
