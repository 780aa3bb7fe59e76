"""The application layer: the ``introspect`` command, the runner, the evaluation harness,
the training driver, the checkpointer factory and the demos. It drives the graphs of
``graphs.<method>``; nothing below imports it."""
