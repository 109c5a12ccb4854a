"""The package's version, in a module that imports nothing.

``pytest_ragmetrics.__version__`` re-exports it, and pyproject.toml reads it from here
(``[tool.setuptools.dynamic]``), so the version is written once. The plugin's run header
and the embedding cache's analyses key read it without importing anything else.
"""

__version__ = "0.1.0"
