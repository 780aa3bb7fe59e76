"""A fifth method declared outside the framework: a plain ReAct loop (think and act, execute,
back) on WebShop, kept in the test package to prove that a method is its own modules plus one
entry point (``react = "tests.support.react_method.graph"`` in the group ``introspect.methods``): its graph,
prompts (``prompts/`` here), view structures and report table reach the CLI, Studio, ``view``
and ``report`` without a line of the app naming it (tests/test_fifth_method.py)."""
