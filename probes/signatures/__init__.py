"""Reading a definition without importing it: the AST index of a module, how a name resolves
(imports, lazy exports, re-exports), a function's or class's parameters as the interpreter
would bind them; the ``signatures``, ``api``, ``locate`` and ``serveargs`` probes."""
