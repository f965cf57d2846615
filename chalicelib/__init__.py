"""Tocsin: incident management on Chalice, DynamoDB and SQS."""
