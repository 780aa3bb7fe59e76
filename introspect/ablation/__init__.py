"""``introspect ablate``: counterfactual ablations of finished runs.

For each introspective intervention a run made (a method declares its kinds and the settings
that switch each off: ``graphs.method.Intervention``), the run's thread is forked at the
checkpoint before the step that led to it (``firings``), the fork continues to its end with that
intervention switched off (``forks``), and one row records both outcomes: what the run reached
with the intervention and what it reaches without it, and the calls, tokens and cost the
intervention added. ``introspect report`` shows them per method (introspect.report.ablation).
"""
