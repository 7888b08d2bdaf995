"""Docstring sections written once: an override, a delegating method or one of a family of
functions keeps its own summary and takes its numpydoc sections (Parameters, Returns) from
where they are written. The estimators' shared parameter blocks are in
``linear_model/_docs.py``."""
import inspect

_HEADINGS = ("Parameters\n----------", "Returns\n-------")


def sections_of(source):
    """The numpydoc sections of ``source`` (a function, or docstring text): from its first
    Parameters or Returns heading to its end, dedented.

    Parameters
    ----------
    source : callable or str
        A function whose docstring holds the sections, or the text itself.

    Returns
    -------
    str
    """
    text = inspect.cleandoc(source if isinstance(source, str) else source.__doc__)
    return text[min(text.index(heading) for heading in _HEADINGS if heading in text):]


def with_sections(source):
    """Decorate a function whose docstring is its summary alone: the numpydoc sections of
    ``source`` (:func:`sections_of`) follow it.

    Parameters
    ----------
    source : callable or str
        Where the sections are written: a function or the text itself.

    Returns
    -------
    callable
        The decorator.
    """
    sections = sections_of(source)

    def decorate(function):
        function.__doc__ = f"{inspect.cleandoc(function.__doc__)}\n\n{sections}"
        return function
    return decorate
