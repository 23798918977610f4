"""Lazy package exports: ``from plankit.teddy import parse_plan`` without importing every
module of the package up front (the command-line tools import packages on start-up).

In a package's ``__init__``::

    __getattr__ = lazy_exports(__name__, {"parse_plan": "parse", "Plan": "plan"})

The first access imports ``<package>.<module>``, takes the name, and caches it in the
package, so later accesses cost nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports each exported name from its module on use."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
