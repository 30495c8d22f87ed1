"""Docstring templates: a numpydoc block that several docstrings share is written once.

The pattern of SciPy's ``scipy._lib.doccer`` (``scipy.ndimage``'s ``docfiller``): a docstring
holds ``%(name)s`` placeholders, and `docfiller` replaces each with the block of that name.
Every line of a multi-line block after its first is indented as the line of its placeholder,
so a block is written once, flush left or indented as a docstring, and lands at the right
depth in any docstring (also one that Python 3.13+ stored without indentation).  A block may
hold placeholders itself (filled in its turn from the same names): a shared skeleton of
sections can take each docstring's own pieces.

Only ``%(name)s`` is replaced: any other ``%`` (a doctest's ``%`` operator) stays as written,
no ``%%`` needed.  It depends on nothing but the standard library and works on any object
whose ``__doc__`` can be assigned: Python functions and classes, and Cython ``def`` functions
(``binding=True``), whose first docstring line may be the signature ``embedsignature`` wrote,
kept as it stands.  Under ``python -OO`` (no docstrings) it leaves the object alone.
"""
import inspect
import re

__all__ = ["SHARED_DOCS", "docfiller", "fill"]

_PLACEHOLDER = re.compile(r"%\((\w+)\)s")

#: Blocks that docstrings of several modules share.  ``callable_wrapper``: the closing sections
#: of a class wrapping a user's Python function (rotode.torque.Callable, rotode.omega.Callable,
#: rotode.events.PythonEvent), with its ``see_also``.
SHARED_DOCS = {
    "callable_wrapper": """
        Attributes
        ----------
        function : callable
            The wrapped function.

        Raises
        ------
        TypeError
            If ``function`` is not callable.

        See Also
        --------
        %(see_also)s""",
}


def fill(doc, blocks):
    """``doc`` with its ``%(name)s`` placeholders replaced by ``blocks[name]``.

    Each block is cleaned as a docstring (`inspect.cleandoc`: surrounding blank lines dropped,
    common indentation removed), its own placeholders are filled, and its lines after the
    first are indented as the placeholder's line (blank lines stay empty).  A name missing
    from ``blocks`` raises ``KeyError``, a block that holds itself ``ValueError``.
    """
    return _fill(doc, blocks, ())


def _fill(doc, blocks, open_names):
    def block(match):
        name = match.group(1)
        if name in open_names:
            raise ValueError(f"docstring block {name!r} holds itself")
        if name not in blocks:
            raise KeyError(f"no docstring block {name!r} (the blocks: {sorted(blocks)})")
        text = _fill(inspect.cleandoc(str(blocks[name])), blocks, open_names + (name,))
        line = doc[doc.rfind("\n", 0, match.start()) + 1:match.start()]
        indent = line[:len(line) - len(line.lstrip())]
        first, *rest = text.split("\n")
        return "\n".join([first] + [indent + x if x else x for x in rest])

    return _PLACEHOLDER.sub(block, doc)


def docfiller(blocks, **values):
    """Decorator: fill the decorated object's docstring from ``blocks`` and ``values``.

    ``blocks`` (a dict) holds the blocks several docstrings share; ``values`` the pieces of
    this docstring alone, for the placeholders of a shared block (they win over a block of the
    same name).  Returns the object itself, its ``__doc__`` filled (see `fill`).

    Examples
    --------
    >>> import inspect
    >>> from rotode._docfill import docfiller
    >>> shared = {"returns": '''
    ...     Returns
    ...     -------
    ...     float
    ...         %(what)s'''}
    >>> @docfiller(shared, what="The sum.")
    ... def add(a, b):
    ...     '''Add two numbers.
    ...
    ...     %(returns)s'''
    >>> print(inspect.getdoc(add))
    Add two numbers.
    <BLANKLINE>
    Returns
    -------
    float
        The sum.
    """
    names = {**blocks, **values}

    def decorate(obj):
        if obj.__doc__ is not None:
            obj.__doc__ = fill(obj.__doc__, names)
        return obj

    return decorate
