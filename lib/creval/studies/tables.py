"""What every study's report shares: table captions, and the guard that keeps a chapter from failing on
degenerate records.

A report function meets records of every shape at a real user's sizes: a table the run never wrote (an empty
frame without columns), one item, a column entirely NaN, a judge that parsed nothing, an order never
answered. The functions handle the cases they know, and where the records hold too little for them they raise
:class:`~creval.core.errors.ThinRecords` (``recs.written(table, *columns)`` and ``recs.manifest_with(*fields)``
raise it for them). :func:`guard_module` wraps every public function of a report module so that
``ThinRecords``, and nothing else, gives a result that says what is missing (a captioned empty table, an empty
figure with that title, a sentence) instead of an exception that would stop the chapter; any other exception
(a typo, a bug) propagates. The result carries the reason (``df.attrs["missing"]``,
``fig.layout.meta["missing"]``) so tests can tell a guarded result from a computed one.
"""
from __future__ import annotations

import functools
import inspect
import logging
import re
import typing
from pathlib import Path

import pandas as pd

from creval.core import paths
from creval.core.errors import ThinRecords

log = logging.getLogger(__name__)

def captioned(df: pd.DataFrame, caption: str) -> pd.DataFrame:
    """``df`` with a caption the book shows above it."""
    df.attrs["caption"] = caption
    return df


SOURCE_KINDS = {"shared": "the staged copy", "download": "a download", "local": "a local copy",
                "sample": "the bundled sample"}
_SOURCE = re.compile(r"\b(local|shared|download|sample):(/[^\s,;()'\"]*)")
_ABSOLUTE = re.compile(r"(?<![\w.:/])(/(?:[^\s/,;()'\"]+/)+[^\s/,;()'\"]*)")


def short_path(path: str) -> str:
    """An absolute path of the build machine as a page may print it: relative to the data home, the checkout or
    the staged data's folder, else its last two parts."""
    p = Path(path)
    shared = paths.shared_data_dir()
    for root, prefix in ((shared, "shared/data"), (paths.home(), ""), (paths.REPO, "")):
        if root is not None:
            try:
                rel = p.relative_to(root)
            except ValueError:
                continue
            return str(Path(prefix) / rel) if prefix else str(rel)
    return str(Path(*p.parts[-2:])) if len(p.parts) > 2 else p.name


def public_text(text) -> str:
    """``text`` with every data source (``shared:/abs/folder``) named by kind and short path, and every other
    absolute path shortened (:func:`short_path`): no page shows the build machine's folders."""
    if not isinstance(text, str):
        return text
    text = _SOURCE.sub(lambda m: f"{SOURCE_KINDS[m.group(1)]} ({short_path(m.group(2))})", text)
    return _ABSOLUTE.sub(lambda m: short_path(m.group(1)), text)


def readable(v) -> str:
    """A nested value (dict, list, tuple) as a reader reads it: ``key: value`` pairs and items separated by
    commas, nested ones in parentheses; no Python brackets or quotes. Anything else is ``str(v)``."""
    def inner(x) -> str:
        text = readable(x)
        return f"({text})" if isinstance(x, dict) and x or isinstance(x, (list, tuple)) and len(x) > 1 else text
    if isinstance(v, dict):
        return ", ".join(f"{k}: {inner(x)}" for k, x in v.items()) if v else "none"
    if isinstance(v, (list, tuple)):
        return ", ".join(inner(x) for x in v) if v else "none"
    return str(v)


def echoes(text: str, prompt: str, words: int) -> bool:
    """Whether ``text`` repeats ``words`` or more consecutive words of ``prompt`` (case and punctuation
    ignored): a generation that hands its prompt back instead of answering it."""
    def tokens(t):
        return re.findall(r"[a-z0-9']+", str(t).lower())
    p, t = tokens(prompt), tokens(text)
    said = {tuple(p[i:i + words]) for i in range(len(p) - words + 1)}
    return any(tuple(t[i:i + words]) in said for i in range(len(t) - words + 1))


def missing_table(what: str, why: str) -> pd.DataFrame:
    """An empty table whose caption says that ``what`` is not computed here, and why."""
    df = captioned(pd.DataFrame({"not computed": [why]}), f"{what}: not computed from these records ({why}).")
    df.attrs["missing"] = why
    return df


def missing_figure(what: str, why: str):
    """An empty figure whose title says that ``what`` is not computed here, and why."""
    import plotly.graph_objects as go
    fig = go.Figure()
    fig.update_layout(title=f"{what}: not computed from these records ({why})", meta={"missing": why})
    return fig


def computed(out):
    """``out``, the result of a guarded report function, when it was computed; the
    :class:`~creval.core.errors.ThinRecords` it fell back on otherwise (a report built on another one is as
    thin as that one)."""
    why = out.attrs.get("missing") if isinstance(out, pd.DataFrame) else None
    if isinstance(out, dict) and set(out) == {"missing"}:
        why = out["missing"]
    if why is not None:
        raise ThinRecords(why)
    return out


def _fallback(fn, what: str, why: str):
    """The result of the kind ``fn`` declares (table, figure, sentence, dict, list, number), saying ``why``."""
    try:
        kind = typing.get_type_hints(fn).get("return")
    except Exception:        # a forward reference the module does not import at run time
        kind = inspect.signature(fn).return_annotation
    name = getattr(kind, "__name__", str(kind))
    if kind is str or name == "str":
        return f"*{what}: not computed from these records ({why}).*"
    if "Figure" in name:
        return missing_figure(what, why)
    if kind is dict or name.startswith("dict") or "dict" in str(kind):
        return {"missing": why}
    if kind is list or name.startswith("list"):
        return []
    if kind is float or name == "float":
        return float("nan")
    return missing_table(what, why)


def _returns_bool(fn) -> bool:
    """Whether ``fn`` is a predicate: its answer cannot say what is missing, and a default would be silent."""
    kind = inspect.signature(fn).return_annotation
    return kind is bool or kind == "bool"


def guarded(fn):
    """``fn``, except that records too thin for it (:class:`~creval.core.errors.ThinRecords`) give a result
    saying what is missing."""
    if _returns_bool(fn):
        raise TypeError(f"{fn.__qualname__} answers True or False: it cannot say what is missing, so it is not guarded")
    what = (fn.__doc__ or fn.__name__).strip().split("\n")[0].rstrip(".")[:80] or fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ThinRecords as e:
            why = str(e)
            log.info("%s.%s: %s", fn.__module__, fn.__name__, why)     # the page says it; no stderr noise
            return _fallback(fn, what, why)
    wrapper.__guarded__ = True
    return wrapper


def guard_module(namespace: dict) -> None:
    """Wrap every public function defined in the module whose ``globals()`` is ``namespace`` with
    :func:`guarded` (call it at the end of a report module). Predicates (``-> bool``) are left as they are: a
    True or False made up for missing records would be a silent default, so they raise."""
    module = namespace["__name__"]
    for name, obj in list(namespace.items()):
        if (inspect.isfunction(obj) and not name.startswith("_") and obj.__module__ == module
                and not getattr(obj, "__guarded__", False) and not _returns_bool(obj)):
            namespace[name] = guarded(obj)
