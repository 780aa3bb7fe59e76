"""Structured Reflection (paper 002): the node family behind graphs/structured_reflection.py.

One small module per part of the algorithm: ``actions`` (the action grammar, parsed from
untrusted model text), ``memory`` (the structured reflection memory keyed by step), ``stage``
(stages, budgets and the trial status), ``constrain`` (disabling failed click targets), and
one module per graph node (``trial``, ``replay``, ``plan``, ``execute``, ``describe``, ``reflect``).
"""
