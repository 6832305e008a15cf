"""HANNA (Chhun et al., COLING 2022; TACL 2024; ``dig-team/hanna-benchmark-asg``, MIT): 1,056 stories on 96
WritingPrompts prompts, 96 by people and 960 by ten generators (2019-2021 models), each rated 1-5 on six criteria
by three MTurk workers. Surprise and Complexity are the criteria nearest to creativity; there is no creativity
item.

File (env ``CREVAL_HANNA_DIR``, staged ``../shared/data/hanna``, downloaded from the pinned commit):
``hanna_stories_annotations.csv``, one row per story and worker: ``Story ID`` (0-1055; the first 96 the
people's), ``Prompt``, ``Story``, ``Model`` (``Human`` for people), the six criteria, ``Worker ID``. The three
ratings of a story come from three different workers, 22 workers in all, very unbalanced (two did most rows).
The Reader is the Metric (Marco et al. 2025) labels these readers lay readers; here they are ``crowd`` (MTurk).
The unit is the prompt: the eleven stories of one prompt share its premise (96 real clusters). The bundled sample
(``data/samples/hanna/``) holds 4 prompts x 3 writers we wrote ourselves, rated by us: it only lets the code run.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd

from creval.core.errors import CrevalError
from creval.datasets.base import Dataset, Remote, Source, check_pins, file_of, resolve
from creval.datasets.rated import Criterion, HumanSet, check_long

_RAW = "https://raw.githubusercontent.com/dig-team/hanna-benchmark-asg/282f27536a5d05ad4ce14298abcd70c45668fed2"
FILE = "hanna_stories_annotations.csv"
DATASET = Dataset(
    name="hanna", env="CREVAL_HANNA_DIR", shared="hanna", files={"annotations": (FILE,)}, required=("annotations",),
    remotes=(Remote(f"{_RAW}/{FILE}", "ef59054d27fa32def06cfdc57243b1dd09c7e71f40b6d9d43fecfbf60e59026b", FILE),),
    how=f"set CREVAL_HANNA_DIR to a folder holding {FILE} (dig-team/hanna-benchmark-asg), or unset it to use the "
        "fallbacks", unit="prompt",
    unit_why="the eleven stories of one WritingPrompts prompt share its premise; 96 prompts are resampled whole")
CRITERIA = (Criterion("relevance", "Relevance", 1, 5), Criterion("coherence", "Coherence", 1, 5),
            Criterion("empathy", "Empathy", 1, 5), Criterion("surprise", "Surprise", 1, 5, creative=True),
            Criterion("engagement", "Engagement", 1, 5), Criterion("complexity", "Complexity", 1, 5, creative=True))
PERSON = "Human"


def source(given: str | Path | None = None, allow_download: bool = False) -> Source:
    """Where HANNA is read from (:func:`creval.datasets.base.resolve`)."""
    return resolve(DATASET, given, allow_download=allow_download)


def load(given: str | Path | None = None, allow_download: bool = True) -> tuple[pd.DataFrame, Source]:
    """The long table (:mod:`creval.datasets.rated`): one row per story and worker."""
    src = source(given, allow_download)
    check_pins(DATASET, src)
    f = file_of(DATASET, src, "annotations")
    try:
        raw = pd.read_csv(f)
    except (OSError, ValueError) as e:
        raise CrevalError(f"hanna: cannot read {f} ({e})", DATASET.how) from None
    need = ["Story ID", "Prompt", "Story", "Model", "Worker ID", *(c.source for c in CRITERIA)]
    missing = [c for c in need if c not in raw]
    if missing:
        raise CrevalError(f"hanna: {f} has no column {', '.join(missing)}", DATASET.how)
    prompts = {p: f"hanna-p{i}" for i, p in enumerate(dict.fromkeys(raw["Prompt"]))}
    df = pd.DataFrame({"id": [f"hanna-{int(s)}" for s in raw["Story ID"]], "prompt": raw["Prompt"].map(prompts),
                       "prompt_text": raw["Prompt"].astype(str), "author": raw["Model"].astype(str),
                       "kind": ["person" if m == PERSON else "model" for m in raw["Model"]],
                       "text": raw["Story"].astype(str), "rater": raw["Worker ID"].astype(str), "rater_kind": "crowd",
                       **{c.column: raw[c.source].astype(float) for c in CRITERIA}})
    return check_long(df, SET), src


SET = HumanSet("hanna", "HANNA (Chhun et al. 2022): WritingPrompts stories by people and ten generators",
               DATASET, CRITERIA, load, rater_kind="crowd", short="HANNA", unit="prompt", why=DATASET.unit_why,
               cite="Chhun et al., COLING 2022; TACL 2024", judges=lambda: load_judges())


JUDGE_FILE = "hanna_metric_scores_llm.csv"
JUDGES = ("Beluga-13B", "ChatGPT", "Llama-13B", "Mistral-7B", "OrcaPlatypus")
"""The five LLM judges of Chhun et al. (TACL 2024), each scoring every story on the six criteria under four
prompt variants."""
ABBREV = {"RE": "relevance", "CH": "coherence", "EM": "empathy", "SU": "surprise", "EG": "engagement",
          "CX": "complexity"}


def load_judges(given: str | Path | None = None) -> pd.DataFrame:
    """The released LLM judges' scores (issue 64's input) as a long table: ``id`` (the story, as in :func:`load`),
    ``judge``, ``variant`` (1-4, the prompt variant), ``criterion``, ``score``. The file holds one row per
    generating system, each cell a list of its 96 stories' values in ``Story ID`` order; the stories' ids come
    from the annotations file. A released value is the mean of the judge's samples, -1 standing for a reply it
    could not read, so a value below the scale's 1 mixes unread replies into the mean: it is kept as NaN
    (``parsed`` False, 1,051 of 126,720), never as a score. The bundled sample holds two made-up judges in the same
    layout (``SampleJudge-A``, ``SampleJudge-B``, two wordings each); empty when the file is not there."""
    src = source(given)
    f = src.path / JUDGE_FILE if (src.path / JUDGE_FILE).exists() else None
    if f is None:
        return pd.DataFrame(columns=["id", "judge", "variant", "criterion", "score", "parsed"])
    stories = pd.read_csv(file_of(DATASET, src, "annotations"), usecols=["Story ID", "Model"]).drop_duplicates()
    ids = {m: [f"hanna-{int(s)}" for s in sorted(g["Story ID"])] for m, g in stories.groupby("Model")}
    raw = pd.read_csv(f)
    rows = []
    for _, r in raw.iterrows():
        order = ids.get(str(r["Model"]))
        if order is None:
            raise CrevalError(f"hanna: {f} names a system {r['Model']!r} the annotations lack", DATASET.how)
        for col in raw.columns:
            parts = col.split()
            if len(parts) != 3 or parts[1] not in ABBREV or not parts[2].isdigit():   # "<judge> SU <variant>"
                continue
            values = ast.literal_eval(r[col])
            if len(values) != len(order):
                raise CrevalError(f"hanna: {f}, {col} of {r['Model']}: {len(values)} values for {len(order)} stories",
                                  DATASET.how)
            rows += [(k, parts[0], int(parts[2]), ABBREV[parts[1]], float(v)) for k, v in zip(order, values)]
    out = pd.DataFrame(rows, columns=["id", "judge", "variant", "criterion", "score"])
    out["parsed"] = out["score"] >= 1
    out.loc[~out["parsed"], "score"] = float("nan")
    return out
