"""The shared kernel of walletd (see docs/DEVELOPING.md).

``py_ecc`` (imported by ``eth_account``) raises the interpreter's recursion limit to 100000
when it is first imported. At that limit deep recursion on untrusted input (a JSON body
nested 100000 levels, a deeply parenthesised policy condition) overflows the C stack and
kills the whole process with SIGSEGV instead of raising ``RecursionError``. It is imported
here first, once, and the limit put back; walletd never calls the py_ecc code that needs it.
"""

import sys as _sys

_LIMIT = _sys.getrecursionlimit()
try:
    import py_ecc  # noqa: F401
except ImportError:  # pragma: no cover - eth_account (and so py_ecc) is a dependency
    pass
finally:
    _sys.setrecursionlimit(_LIMIT)
