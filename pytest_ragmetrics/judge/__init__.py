"""The LLM judge: its configuration, prompts, HTTP client, verdicts and verdict cache."""

# A row's verdicts at most (``[judge] repeats``, ``--ragmetrics-judge-repeats``): each is
# a request, and 20 already put the noise of a row's mean below a quarter of one verdict's.
# Here, not in ``judge.config``, so that the options name it without importing the judge.
MAX_REPEATS = 20
