"""What the tests share, imported by name (``from helpers.project import Project``):
``project`` (a pytester project with an eval, its rows and gates, run in one mode),
``items`` (a stand-in for a pytest item), ``files`` (directories a run cannot write).
The fixtures built on them are in tests/conftest.py."""
