"""Keep ``params/default.yaml`` and every chapter's parameters from drifting from the studies' Configs.

``sync()`` rewrites, from the Configs alone: ``params/default.yaml`` (one section per study, a key under the
first study that declares it, the comment of its Config field) and each chapter's ``parameters`` cell; it
keeps the chapter's setup cell one line (``cfg = XConfig.from_params(globals())``: every key the Config
declares, read from the parameters cell) and both cells folded (collapsed in JupyterLab, hidden or folded
in the rendered book). Run it after changing a Config:
``creval sync-params``. Tests check the same equalities, so a forgotten sync fails loudly.
"""
from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import yaml

from creval.core import paths
from creval.studies.registry import STUDIES

HEADER = """\
# The embedded offline default book: exactly the defaults of the studies' Configs
# (lib/creval/studies/*/config.py; written by `creval sync-params`, a test keeps the two equal).
# Flat keys shared by all chapters: a key means the same thing in every chapter. Rerun with another model:
#   creval book --params params/default.yaml -p model=gpt-4o
"""
FIELD = re.compile(r"^\s+(\w+)\s*:\s*[^=]+=\s*.*?(?:#\s*(.*))?$")


def field_comments(cls) -> dict[str, str]:
    """{field: the ``# comment`` after its declaration} over the Config's class hierarchy."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or not hasattr(klass, "__dataclass_fields__"):
            continue
        try:
            src = inspect.getsource(klass)
        except (OSError, TypeError):
            continue
        for line in src.splitlines():
            m = FIELD.match(line)
            if m and m.group(1) in klass.__dataclass_fields__ and m.group(2):
                out[m.group(1)] = m.group(2).strip()
    return out


def yaml_value(v) -> str:
    return yaml.safe_dump(v, default_flow_style=True, width=10_000).strip().removesuffix("...").strip()


def py_value(v) -> str:
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(py_value(x) for x in v) + "]"
    return repr(v)


def _aligned(rows: list[tuple[str, str]]) -> list[str]:
    width = max((len(a) for a, c in rows if c), default=0) + 2
    return [f"{a:<{width}}# {c}".rstrip() if c else a for a, c in rows]


def default_yaml(studies: dict) -> str:
    seen: set[str] = set()
    parts = [HEADER]
    for name, study in studies.items():
        chapter, cls = study.chapter, study.config
        comments = field_comments(cls)
        rows = [(f"{k}: {yaml_value(v)}", comments.get(k, "")) for k, v in cls.defaults().items()
                if k not in seen and k in cls.flat_keys()]
        seen |= set(cls.flat_keys())
        if rows:
            title = f"# --- {name} ({Path(chapter).name}) "
            parts.append(title + "-" * max(3, 100 - len(title)) + "\n" + "\n".join(_aligned(rows)) + "\n")
    return "\n".join(parts)


PARAMETERS_SUMMARY = "Parameters this page ran with"
SETUP_TAG = "hide-input"        # the setup cell: its input is hidden in the offline book, folded by Quarto


def parameters_source(cls) -> str:
    comments = field_comments(cls)
    rows = [(f"{k} = {py_value(v)}", comments.get(k, "")) for k, v in cls.defaults().items()]
    head = (f'#| code-summary: "{PARAMETERS_SUMMARY}"\n'
            "# Parameters: the study's Config defaults (`creval book` and `papermill --engine creval` "
            "write other values here)\n")
    return head + "\n".join(_aligned(rows))


def _source_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def setup_call(cls) -> str:
    """The one line that builds a chapter's Config from its parameters cell (every declared key is read
    from the notebook's namespace; the others are ignored)."""
    return f"{cls.__name__}.from_params(globals())"


def rewrite_from_params(src: str, cls) -> str:
    """``src`` with a ``cls.from_params(dict(k=k, ...))`` call (the older, long form) replaced by
    :func:`setup_call`."""
    start = src.find(f"{cls.__name__}.from_params(dict(")
    if start < 0:
        return src
    depth, i = 2, start + len(f"{cls.__name__}.from_params(dict(")
    while depth and i < len(src):
        depth += {"(": 1, ")": -1}.get(src[i], 0)
        i += 1
    return src[:start] + setup_call(cls) + src[i:]


def _fold(metadata: dict, tag: str | None = None) -> bool:
    """Collapse the cell's input in JupyterLab (and tag it); True if the metadata changed."""
    before = json.dumps(metadata, sort_keys=True)
    metadata.setdefault("jupyter", {})["source_hidden"] = True
    if tag and tag not in metadata.setdefault("tags", []):
        metadata["tags"].append(tag)
    return json.dumps(metadata, sort_keys=True) != before


def sync_chapter(chapter: Path, cls, write: bool = True) -> bool:
    nb = json.loads(chapter.read_text())
    changed = False
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        meta = cell.setdefault("metadata", {})
        if "parameters" in meta.get("tags", []):
            new = parameters_source(cls)
            changed |= _fold(meta)
        else:
            new = rewrite_from_params(src, cls)
            if setup_call(cls) in new:
                changed |= _fold(meta, SETUP_TAG)
        if new != src:
            cell["source"], changed = _source_lines(new), True
    if changed and write:
        chapter.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return changed


def sync(write: bool = True) -> list[str]:
    """Rewrite the default profile and every chapter's parameters from the Configs; return what changed."""
    changed = []
    target = paths.REPO / "params" / "default.yaml"
    text = default_yaml(STUDIES)
    if not target.exists() or target.read_text() != text:
        changed.append(str(target.relative_to(paths.REPO)))
        if write:
            target.write_text(text)
    for study in STUDIES.values():
        if sync_chapter(paths.REPO / study.chapter, study.config, write):
            changed.append(study.chapter)
    return changed
