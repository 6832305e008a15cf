"""SLM vs people (Marco, Rello & Gonzalo, COLING 2025; from ``grmarco/the-reader-is-the-metric``, MIT): 122 film
synopses written from 61 titles, one by a person and one by a fine-tuned BART-large model per title, each rated
0-4 on six items (creativity among them) by lay readers, 68 in all, about 60 texts each.

Files (env ``CREVAL_SLM_DIR``, staged ``../shared/data/slm_synopses``, downloaded from the pinned commit):
``ranked_answers.csv`` (one row per reader and text: ``user, title``, the six items in Spanish, ``writer``
human/bot, ``experiment``) and ``slm_synopses.csv`` (``Title, text, author`` human/machine). Texts join on the
title and the writer. Readers saw the texts under three conditions (blind, authorship shown, told all were AI);
all are kept, the condition is not a stratum here. The unit is the title (61 prompts, resampled whole). The
bundled sample (``data/samples/slm/``) holds six titles we wrote synopses for and rated ourselves.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from creval.core.errors import CrevalError
from creval.datasets.base import Dataset, Remote, Source, check_pins, file_of, resolve
from creval.datasets.rated import Criterion, HumanSet, check_long

_RAW = ("https://raw.githubusercontent.com/grmarco/the-reader-is-the-metric/b0fbea89fc6ea980b5a57f420f397b493629aacc/"
        "0_1_datasets_preparation/slm/input")
PINS = (("ranked_answers.csv", "8d311e60e37798652b459ebf39f45baa1f68790c64ce294c25e11eb09791fdd0"),
        ("slm_synopses.csv", "0346f56c9d48645f76961f1d5cdea922b172917b8308a34192d4e301fb69f8b5"))
DATASET = Dataset(
    name="slm", env="CREVAL_SLM_DIR", shared="slm_synopses",
    files={"ratings": ("ranked_answers.csv",), "texts": ("slm_synopses.csv",)}, required=("ratings", "texts"),
    remotes=tuple(Remote(f"{_RAW}/{rel}", sha, rel) for rel, sha in PINS),
    how="set CREVAL_SLM_DIR to a folder holding ranked_answers.csv and slm_synopses.csv "
        "(grmarco/the-reader-is-the-metric), or unset it to use the fallbacks", unit="prompt",
    unit_why="the two synopses of one title share it; 61 titles are resampled whole")
CRITERIA = (Criterion("attractiveness", "Attractiveness", 0, 4, raw="atractivo"),
            Criterion("creativity", "Creativity", 0, 4, creative=True, raw="creatividad"),
            Criterion("readability", "Readability", 0, 4, raw="gramaticalidad"),
            Criterion("informativeness", "Informativeness", 0, 4, raw="informacion"),
            Criterion("relevance", "Relevance to the title", 0, 4, raw="relacion"),
            Criterion("understandability", "Understandability", 0, 4, raw="sentido"))
WRITER = {"human": "person", "bot": "model", "machine": "model"}


def source(given: str | Path | None = None, allow_download: bool = False) -> Source:
    """Where the SLM synopses are read from (:func:`creval.datasets.base.resolve`)."""
    return resolve(DATASET, given, allow_download=allow_download)


def _read(f: Path, need: list[str]) -> pd.DataFrame:
    try:
        raw = pd.read_csv(f)
    except (OSError, ValueError) as e:
        raise CrevalError(f"slm: cannot read {f} ({e})", DATASET.how) from None
    missing = [c for c in need if c not in raw]
    if missing:
        raise CrevalError(f"slm: {f} has no column {', '.join(missing)}", DATASET.how)
    return raw


def load(given: str | Path | None = None, allow_download: bool = True) -> tuple[pd.DataFrame, Source]:
    """The long table (:mod:`creval.datasets.rated`): one row per synopsis and reader."""
    src = source(given, allow_download)
    check_pins(DATASET, src)
    ans = _read(file_of(DATASET, src, "ratings"), ["user", "title", "writer", *(c.source for c in CRITERIA)])
    txt = _read(file_of(DATASET, src, "texts"), ["Title", "text", "author"])
    texts = {(str(t), WRITER.get(str(a), str(a))): str(x) for t, a, x in zip(txt["Title"], txt["author"], txt["text"])}
    titles = {t: f"slm-t{i}" for i, t in enumerate(dict.fromkeys(txt["Title"].astype(str)))}
    kind = [WRITER.get(str(w), str(w)) for w in ans["writer"]]
    keys = list(zip(ans["title"].astype(str), kind))
    lost = [k for k in keys if k not in texts]
    if lost:
        raise CrevalError(f"slm: {len(lost)} rating rows name a synopsis slm_synopses.csv lacks (first: {lost[0]})",
                          DATASET.how)
    df = pd.DataFrame({"id": [f"{titles[t]}-{k}" for t, k in keys], "prompt": [titles[t] for t, _ in keys],
                       "prompt_text": ans["title"].astype(str), "author": kind, "kind": kind,
                       "text": [texts[k] for k in keys], "rater": ans["user"].astype(str), "rater_kind": "lay",
                       **{c.column: ans[c.source].astype(float) for c in CRITERIA}})
    return check_long(df, SET), src


SET = HumanSet("slm", "SLM vs people (Marco et al. 2025): film synopses from titles, rated by lay readers",
               DATASET, CRITERIA, load, rater_kind="lay", short="SLM synopses", unit="prompt", why=DATASET.unit_why,
               cite="Marco, Rello & Gonzalo, COLING 2025")
