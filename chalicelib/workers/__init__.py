"""SQS messages and the handlers that Lambda and the local worker loop share."""
