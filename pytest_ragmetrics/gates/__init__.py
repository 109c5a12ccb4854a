"""Gates: evaluating rules against aggregates and stored baselines."""
