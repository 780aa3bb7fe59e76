"""The ``introspect`` subcommands, one module each.

Every module declares its command the same way: ``COMMAND = Command(name, help, arguments, run)``
(``introspect.commands.command``), with the options several commands share taken from
``introspect.commands.arguments``; ``introspect.cli`` registers each from its one list. A module
imports what its command runs when it runs (``introspect --help`` stays light).
"""
