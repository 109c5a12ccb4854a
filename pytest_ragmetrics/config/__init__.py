"""The run's configuration: thresholds.toml, gate rules, where the project is."""
