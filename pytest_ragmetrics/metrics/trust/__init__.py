"""The Trust-Score suite: refusal detection, entailment judges, the suite's numbers."""
