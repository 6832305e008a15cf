"""TTCW, "Art or Artifice?" (Chakrabarty et al., CHI 2024; ``salesforce/creativity_eval``, BSD-3-Clause).

Files (env ``CREVAL_TTCW_DIR``, staged ``../shared/data/ttcw_art_or_artifice``):

- ``ttcw_short_stories.json``: 48 stories ``story_idx, story_id, story_name, plot, content`` on 12 plots;
  for each plot one New Yorker story (``content`` is only its URL) and one each by Claude, GPT-3.5 and GPT-4
  (full text) -> :func:`load_stories`;
- ``ttcw_annotations.json``: 48 stories x 14 Torrance tests x 3 experts, ``binary_verdict`` Yes/No
  -> :func:`load_verdicts` (per story: expert "Yes" count 0-42 and its originality part, tests 9-11, 0-9);
- ``ttcw_all_tests.json``: the 14 tests, each with its Torrance dimension, category, question and the text the
  paper's judges were shown before the question -> :func:`load_tests`;
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


def load_expert_counts(given: str | Path | None = None) -> pd.DataFrame:
    """Per story and expert (issue 64): ``story_id, group, rater`` (``expert-<expert_idx>``), ``passes`` (the
    tests, of 14, that this expert said the story passes) and ``tests`` (the tests the expert answered). Each story
    has three experts; ten experts in all."""
    src = source(given, allow_download=True)
    f = file_of(DATASET, src, "verdicts")
    df = pd.DataFrame(read_json(f))
    need = {"story_id", "story_idx", "expert_idx", "ttcw_idx", "binary_verdict"}
    if not need <= set(df.columns):
        raise CrevalError(f"{f}: expected rows with {', '.join(sorted(need))}",
                          "use Art_or_Artifice/annotations/ttcw_annotations.json")
    df["yes"] = df["binary_verdict"].astype(str).str.strip().str.lower().eq("yes")
    g = df.groupby(["story_id", "story_idx", "expert_idx"], sort=False)
    out = g["yes"].agg(["sum", "size"]).reset_index()
    return pd.DataFrame({"story_id": out["story_id"].astype(str), "group": out["story_idx"].map(plot_group),
                         "rater": "expert-" + out["expert_idx"].astype(str), "passes": out["sum"].astype(int),
                         "tests": out["size"].astype(int)})


def llm_judge_models(given: str | Path | None = None) -> list[str]:
    src = source(given, allow_download=True)
    if src.path.is_file():
        return []
    d = next((p for p in (src.path / "llm_judge_annotations", src.path / "data") if p.is_dir()), None)
    return sorted(p.stem.removeprefix("annotations_") for p in d.glob("annotations_*.jsonl")) if d else []


def load_llm_judge(model: str, given: str | Path | None = None) -> pd.DataFrame:
    """Per story: ``llm_passes`` = replies of the staged LLM judge ``model`` that start with "Yes", and ``tests``
    = its replies on that story (14 when it answered every test)."""
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
    g = pd.DataFrame(recs).groupby("story_id")["yes"]
    return pd.DataFrame({"llm_passes": g.sum(), "tests": g.size()}).reset_index()


def load_tests(given: str | Path | None = None) -> pd.DataFrame:
    """The 14 tests: ``ttcw_idx, dimension, category, question, background`` (what the test looks for: the text
    the paper's judges read before the question, up to its closing instructions). Empty on a source without them
    (our bundled sample)."""
    src = source(given, allow_download=True)
    f = file_of(DATASET, src, "tests", required=False)
    if f is None or src.is_sample:
        return pd.DataFrame(columns=["ttcw_idx", "dimension", "category", "question", "background"])
    rows = read_json(f)
    need = {"ttcw_idx", "torrance_dimension", "category", "question", "full_prompt"}
    if not isinstance(rows, list) or not rows or not need <= set(rows[0]):
        raise CrevalError(f"{f}: expected a list of tests with {', '.join(sorted(need))}",
                          "use Art_or_Artifice/tests/ttcw_all_tests.json")
    return pd.DataFrame([{"ttcw_idx": int(r["ttcw_idx"]), "dimension": r["torrance_dimension"],
                          "category": r["category"], "question": str(r["question"]).strip(),
                          "background": str(r["full_prompt"]).split("\n\nGiven the story")[0].strip()}
                         for r in rows]).sort_values("ttcw_idx").reset_index(drop=True)
