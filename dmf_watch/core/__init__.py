"""What every stage shares and that imports nothing of the project: settings, error types, disk checks, the URL policy and the table-exists check."""
