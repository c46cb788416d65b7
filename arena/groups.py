"""Exception groups: trio raises through nurseries, so what a user caused arrives wrapped."""

from __future__ import annotations


def first_leaf(e: BaseException) -> BaseException:
    """The first exception inside (possibly nested) exception groups, or ``e`` itself."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    return e


def describe(e: BaseException) -> str:
    """One line for what ended a call: the first leaf's message, else its type."""
    leaf = first_leaf(e)
    return str(leaf) or type(leaf).__name__
