"""Per-eval results: merging rows into aggregates, statistics, comparing systems."""
