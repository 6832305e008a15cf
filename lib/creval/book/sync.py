"""Keep ``params/default.yaml`` and every chapter's parameters from drifting from the studies' Configs.

``sync()`` rewrites, from the Configs alone: ``params/default.yaml`` (one section per study, a key under the
first study that declares it, the comment of its Config field), each chapter's ``parameters`` cell, and the
keyword list of its ``XConfig.from_params(dict(...))`` call. Run it after changing a Config:
``creval sync-params``. Tests check the same equalities, so a forgotten sync fails loudly.
"""
from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import yaml

from creval.core import paths

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
        rows = [(f"{k}: {yaml_value(v)}", comments.get(k, "")) for k, v in cls.defaults().items() if k not in seen]
        seen |= set(cls.keys())
        if rows:
            title = f"# --- {name} ({Path(chapter).name}) "
            parts.append(title + "-" * max(3, 100 - len(title)) + "\n" + "\n".join(_aligned(rows)) + "\n")
    return "\n".join(parts)


def parameters_source(cls) -> str:
    comments = field_comments(cls)
    rows = [(f"{k} = {py_value(v)}", comments.get(k, "")) for k, v in cls.defaults().items()]
    head = "# Parameters: the study's Config defaults (`creval book` and `papermill --engine creval` write other values here)\n"
    return head + "\n".join(_aligned(rows))


def _source_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def rewrite_from_params(src: str, cls) -> str:
    """``src`` with the keywords of ``cls.__name__.from_params(dict(...))`` replaced by every Config key."""
    start = src.find(f"{cls.__name__}.from_params(dict(")
    if start < 0:
        return src
    open_at = start + len(f"{cls.__name__}.from_params(dict(")
    depth, i = 2, open_at
    while depth and i < len(src):
        depth += {"(": 1, ")": -1}.get(src[i], 0)
        i += 1
    prefix = src[:start].rsplit("\n", 1)[-1]
    indent = " " * (len(prefix) + len(f"{cls.__name__}.from_params(dict("))
    words, lines, line = [f"{k}={k}" for k in cls.keys()], [], ""
    for w in words:
        piece = (", " if line else "") + w
        if line and len(indent) + len(line) + len(piece) > 110:
            lines.append(line + ",")
            line = w
        else:
            line += piece
    lines.append(line)
    body = ("\n" + indent).join(lines)
    return src[:open_at] + body + "))" + src[i:]


def sync_chapter(chapter: Path, cls, write: bool = True) -> bool:
    nb = json.loads(chapter.read_text())
    changed = False
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            new = parameters_source(cls)
        else:
            new = rewrite_from_params(src, cls)
        if new != src:
            cell["source"], changed = _source_lines(new), True
    if changed and write:
        chapter.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return changed


def sync(write: bool = True) -> list[str]:
    """Rewrite the default profile and every chapter's parameters from the Configs; return what changed."""
    from creval.studies.registry import STUDIES   # book sits above studies: a plain downward import
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
