"""What an ``if``'s ``else`` sees: the names as they were before the ``if``, not as its body
left them.

The walk shares one environment between an ``if``'s body and its ``else`` (the last binding
walked holds after the ``if``). A body's binding must not reach the ``else``, which runs only
when the body did not: category_encoders' ``convert_input`` binds ``X = pd.DataFrame(X)`` under
``if isinstance(X, list):`` and reads ``X.todense()`` under ``elif isinstance(X, csr_matrix):``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

_MISSING = object()


def branches(st: ast.stmt, local: dict, bodies: list[list[ast.stmt]]) -> Iterator[list[ast.stmt]]:
    """Yield ``bodies`` (an ``if``'s body, then its ``else``); between them, ``local`` is put
    back as it was before the body, and after the ``else``, what the body bound and the
    ``else`` did not bind holds, as before."""
    if not isinstance(st, ast.If) or len(bodies) != 2:
        yield from bodies
        return
    before = dict(local)
    yield bodies[0]
    after_body = dict(local)
    changed = [
        k for k in set(before) | set(local) if local.get(k, _MISSING) is not before.get(k, _MISSING)
    ]
    for k in changed:  # the else starts from what held before the if
        if k in before:
            local[k] = before[k]
        else:
            local.pop(k, None)
    yield bodies[1]
    for k in changed:  # the body's binding holds where the else left the name alone
        if local.get(k, _MISSING) is before.get(k, _MISSING) and k in after_body:
            local[k] = after_body[k]
