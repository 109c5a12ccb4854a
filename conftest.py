"""Root conftest of the example evals under evals/.

The plugin itself is loaded through its pytest11 entry point, so nothing is needed here
for the bundled examples. A project that evaluates a live system defines the fixtures
that call it in a file like this one.
"""
