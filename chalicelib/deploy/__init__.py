"""Deployment helpers: the CloudFormation merge template and the per-stage IAM policies, both
generated from the same definitions the local stack uses (PynamoDB models, queue names, the
Chalice app's event sources), and the static list of AWS calls the code makes.

    python -m chalicelib.deploy template                  > template/resources.json
    python -m chalicelib.deploy policy --stage prod       > .chalice/policy-prod.json
    python -m chalicelib.deploy parameters --stage prod   # CloudFormation parameter overrides
    python -m chalicelib.deploy check --stage prod        # committed files == generated ones
    python -m chalicelib.deploy calls                     # AWS operations found in the code
    python -m chalicelib.deploy deploy --stage prod ...   # what `make deploy` runs

Build-time only: the Lambda handler never imports this package.
"""
