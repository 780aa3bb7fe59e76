"""``introspect study``: a comparison as one command, built on the evaluation, report and viewer.

A study file (spec: what to compare) runs every run and repeat through ``introspect.evaluate``
into one folder (run: ``spec.toml``, ``results/<label>.r<K>.jsonl``, ``journal.jsonl``,
``checkpoints.sqlite``, ``report/``, ``views/``); running it again continues it. Budgets stop
it cleanly (budget), ``--dry-run`` says what it would cost (estimate), the journal records
what happened (journal).
"""
