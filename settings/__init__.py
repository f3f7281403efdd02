"""What every stage shares and that imports nothing of the project: settings, error types, disk checks and the URL policy."""
