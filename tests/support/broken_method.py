"""A method module whose dependency is not installed: the entry point naming it is broken
(tests/test_fifth_method.py)."""

import a_package_nobody_installed  # noqa: F401
