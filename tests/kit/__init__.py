"""The test kit: an API client (`api`), a console client (`console`), factories (`factories`), and
the per-process Cognito pool of the console tests (`cognito`). README.md beside this shows them."""
