"""TTCW, "Art or Artifice?" (Chakrabarty et al., CHI 2024; ``salesforce/creativity_eval``, BSD-3-Clause).

Files (env ``CREVAL_TTCW_DIR``, staged ``../shared/data/ttcw_art_or_artifice``):

- ``ttcw_short_stories.json``: 48 stories ``story_idx, story_id, story_name, plot, content`` on 12 plots;
  for each plot one New Yorker story (``content`` is only its URL) and one each by Claude, GPT-3.5 and GPT-4
  (full text) -> :func:`load_stories`;
- ``ttcw_annotations.json``: 48 stories x 14 Torrance tests x 3 experts, ``binary_verdict`` Yes/No
  -> :func:`load_verdicts` (per story: expert "Yes" count 0-42 and its originality part, tests 9-11, 0-9);
- ``llm_judge_annotations/annotations_<model>.jsonl``: the paper's LLM-judge replies (``id`` like
  ``story_0_Claude_test3``) -> :func:`load_llm_judge` (per story: replies starting with "Yes").

Ids: ``story_id`` as upstream (``0_Claude``); the group of a story (for leave-group-out references) is its
plot, ``ttcw-plot-<story_idx>``. The bundled sample (``data/samples/ttcw/``) holds a few short stories we
wrote ourselves and NO expert verdicts: checks against experts say so and are skipped.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from creval.core.errors import CrevalError
from creval.core.io import read_json
from creval.datasets.base import Dataset, Source, file_of, resolve

DATASET = Dataset(
    name="ttcw", env="CREVAL_TTCW_DIR", shared="ttcw_art_or_artifice",
    unit="plot", unit_why="the New Yorker story and the three LLM stories written from one plot share its premise "
    "and were rated side by side; the writer (a person or an LLM) is the author, read within",
    files={"stories": ("ttcw_short_stories.json", "stories/ttcw_short_stories.json"),
           "released": ("released_stories.json", "ttcw_short_stories.json", "stories/ttcw_short_stories.json"),
           "verdicts": ("ttcw_annotations.json", "annotations/ttcw_annotations.json"),
           "tests": ("ttcw_all_tests.json", "tests/ttcw_all_tests.json")},
    required=("stories",),
    how="set CREVAL_TTCW_DIR to a folder holding ttcw_short_stories.json and ttcw_annotations.json "
        "(salesforce/creativity_eval, Art_or_Artifice), or unset it to use the fallbacks")
ORIGINALITY_TESTS = (9, 10, 11)


def source(given: str | Path | None = None, allow_download: bool = False) -> Source:
    return resolve(DATASET, given, allow_download=allow_download)



def plot_group(story_idx) -> str:
    return f"ttcw-plot-{int(story_idx)}"


def load_stories(given: str | Path | None = None, with_text_only: bool = True, released: bool = False) -> pd.DataFrame:
    """Stories as ``story_id, group, source (NewYorker/Claude/GPT4/GPT3.5), name, plot, text`` (text None
    where upstream has only a URL; those rows dropped unless ``with_text_only=False``). ``released``: every
    writer's stories for chapter 09's comparison (the same file upstream; on the bundled sample,
    ``released_stories.json``, which adds illustrative GPT3.5-named stories)."""
    src = source(given, allow_download=True)
    f = file_of(DATASET, src, "released" if released else "stories")
    rows = read_json(f)
    if not isinstance(rows, list) or not rows or not {"story_id", "story_idx", "content"} <= set(rows[0]):
        raise CrevalError(f"{f}: expected a list of stories with story_idx, story_id, content",
                          "use Art_or_Artifice/stories/ttcw_short_stories.json")
    out = []
    for r in rows:
        text = str(r.get("content") or "").strip()
        is_url = text.startswith("http")
        out.append({"story_id": r["story_id"], "group": plot_group(r["story_idx"]),
                    "source": str(r["story_id"]).split("_", 1)[1], "name": r.get("story_name", ""),
                    "plot": r.get("plot", ""), "text": None if is_url or not text else text})
    df = pd.DataFrame(out)
    if with_text_only:
        df = df[df["text"].notna()].reset_index(drop=True)
    df.attrs["source"] = str(src)
    df.attrs["is_sample"] = src.is_sample
    return df


def has_verdicts(given: str | Path | None = None) -> bool:
    src = source(given, allow_download=True)
    return not src.is_sample and file_of(DATASET, src, "verdicts", required=False) is not None


def load_verdicts(given: str | Path | None = None) -> pd.DataFrame:
    """Per story: ``passes`` (expert Yes verdicts over 14 tests x 3 experts), ``originality_passes``
    (tests 9-11), ``n_verdicts``."""
    src = source(given, allow_download=True)
    f = file_of(DATASET, src, "verdicts")
    rows = read_json(f)
    df = pd.DataFrame(rows)
    if not {"story_id", "ttcw_idx", "binary_verdict"} <= set(df.columns):
        raise CrevalError(f"{f}: expected rows with story_id, ttcw_idx, binary_verdict",
                          "use Art_or_Artifice/annotations/ttcw_annotations.json")
    df["yes"] = df["binary_verdict"].astype(str).str.strip().str.lower().eq("yes")
    df["orig"] = df["ttcw_idx"].astype(int).isin(ORIGINALITY_TESTS)
    g = df.groupby("story_id")
    out = pd.DataFrame({"passes": g["yes"].sum(), "originality_passes": g.apply(lambda x: int((x.yes & x.orig).sum())),
                        "n_verdicts": g.size()}).reset_index()
    return out


def llm_judge_models(given: str | Path | None = None) -> list[str]:
    src = source(given, allow_download=True)
    if src.path.is_file():
        return []
    d = next((p for p in (src.path / "llm_judge_annotations", src.path / "data") if p.is_dir()), None)
    return sorted(p.stem.removeprefix("annotations_") for p in d.glob("annotations_*.jsonl")) if d else []


def load_llm_judge(model: str, given: str | Path | None = None) -> pd.DataFrame:
    """Per story: ``llm_passes`` = replies of the staged LLM judge ``model`` that start with "Yes"."""
    src = source(given, allow_download=True)
    f = next((p for p in (src.path / "llm_judge_annotations" / f"annotations_{model}.jsonl",
                          src.path / "data" / f"annotations_{model}.jsonl") if p.exists()), None)
    if f is None:
        raise CrevalError(f"ttcw: no LLM-judge file annotations_{model}.jsonl in {src}",
                          f"choose one of {llm_judge_models(given)}")
    recs = []
    for line in f.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            sid = str(r["id"]).removeprefix("story_").rsplit("_test", 1)[0]
            recs.append({"story_id": sid, "yes": str(r.get("response", "")).strip().lower().startswith("yes")})
    df = pd.DataFrame(recs)
    return df.groupby("story_id")["yes"].sum().rename("llm_passes").reset_index()
