"""Alternative Uses Test responses with human originality ratings (validation of the novelty judge).

One folder (env ``CREVAL_AUT_DIR``, staged ``../shared/data/aut``) with two public sets:

- ``ocsai1/raw/finetune-gt_main2_prepared_{train,val,test}.jsonl`` (Organisciak et al. 2023, ``massivetexts/ocsai``,
  MIT): rows ``{"prompt": "AUT Prompt:<object>\\nResponse:<use>\\nScore:\\n", "completion": "<score x 10>"}``;
  the score (1-5) is the mean of human judges -> :func:`load_ocsai`.
- ``cambridge_aut/{bowl,paperclip}_AUT_dataset.xlsx`` (Sun et al. 2023, ``ghydsgaaa/Cambridge-AUT-dataset``,
  CC BY-NC-ND 4.0; upstream names have spaces instead of underscores): ``id, Responses, rater1..3, average``
  on 0-4 -> :func:`load_cambridge`.

Item ids: ``ocsai-<row>`` (row = position in the main2 train+val+test files, the order of the staged
``ocsai1_all_flat.csv``) and ``cambridge-<object>-<id>``. The bundled sample (``data/samples/aut/``, the same
layout, Cambridge as ``.csv``) holds responses and scores we wrote ourselves: illustrative only.
"""
from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from creval.core.errors import CrevalError
from creval.core.io import read_any
from creval.datasets.base import Dataset, Remote, Source, file_of, resolve

_OCSAI = "https://raw.githubusercontent.com/massivetexts/ocsai/db5a3ee43c7e19bbcabdc0b0ac0ee8d6e51f9276/data/ocsai1"
_CAMB = ("https://raw.githubusercontent.com/ghydsgaaa/Cambridge-AUT-dataset/"
         "12af050547d3775e6e05c3a3906e11914b04a130/data")
SPLITS = ("train", "val", "test")
OBJECTS = ("bowl", "paperclip")


def _ocsai_file(split: str) -> str:
    return f"ocsai1/raw/finetune-gt_main2_prepared_{split}.jsonl"


DATASET = Dataset(
    name="aut", env="CREVAL_AUT_DIR", shared="aut",
    unit="response", stratum="object", unit_why="each response is rated on its own and Ocsai-1 names no "
    "respondent; the object (a bowl, a paperclip) is the prompt, kept fixed as a stratum, so a conclusion "
    "holds for these objects",
    files={**{f"ocsai_{s}": (_ocsai_file(s),) for s in SPLITS},
           **{f"cambridge_{o}": (f"cambridge_aut/{o}_AUT_dataset.xlsx", f"cambridge_aut/{o}_AUT_dataset.csv")
              for o in OBJECTS}},
    required=("ocsai_test",),
    remotes=(Remote(f"{_OCSAI}/finetune-gt_main2_prepared_train.jsonl",
                    "7b2ed8fb8a1b3c98dbb86428c222c5806870ab73a280d6e664aee137bf05ddfd", _ocsai_file("train")),
             Remote(f"{_OCSAI}/finetune-gt_main2_prepared_val.jsonl",
                    "a40bc78a5275ad274baeac7f410f7c1beb37e7913b138f5ef5fcfee8e15ccd9b", _ocsai_file("val")),
             Remote(f"{_OCSAI}/finetune-gt_main2_prepared_test.jsonl",
                    "bab9bf8fc28c27113a7d4d55e8f718edbad02214d14d53d98e8c78f07b3a4068", _ocsai_file("test")),
             Remote(f"{_CAMB}/{quote('bowl AUT dataset.xlsx')}",
                    "f8caa57cdebe1d8f19257c88e56c5346415f5289897efaa10f4150508341ac2d",
                    "cambridge_aut/bowl_AUT_dataset.xlsx"),
             Remote(f"{_CAMB}/{quote('paperclip AUT dataset.xlsx')}",
                    "69e75792d0caa20363bf49a5dd57bbac731f2a19159a6b04753b0617999d7a96",
                    "cambridge_aut/paperclip_AUT_dataset.xlsx")),
    how="set CREVAL_AUT_DIR to a folder holding ocsai1/raw/finetune-gt_main2_prepared_*.jsonl and "
        "cambridge_aut/*_AUT_dataset.xlsx, or unset it to use the fallbacks")


def source(given: str | Path | None = None, allow_download: bool = False) -> Source:
    return resolve(DATASET, given, allow_download=allow_download)


def _sample(n: int | None, df: pd.DataFrame, seed: int) -> pd.DataFrame:
    if n is None or n >= len(df):
        return df.reset_index(drop=True)
    return df.sample(n=n, random_state=seed).reset_index(drop=True)


def _spread(df: pd.DataFrame, n: int | None, objects: int | None, seed: int) -> pd.DataFrame:
    """Keep the ``objects`` most frequent prompts, then ``n`` rows split evenly over them (seeded)."""
    counts = df["prompt"].value_counts()
    keep = list(counts.index[:objects]) if objects else list(counts.index)
    df = df[df["prompt"].isin(keep)]
    if n is None:
        return df.reset_index(drop=True)
    per, extra = divmod(n, len(keep))
    parts = [_sample(per + (i < extra), df[df["prompt"] == o], seed) for i, o in enumerate(keep)]
    return pd.concat(parts, ignore_index=True)


def _ocsai_rows(f: Path, split: str) -> list[dict]:
    out = []
    for i, line in enumerate(f.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            head, rest = r["prompt"].split(" Prompt:", 1)
            obj, rest = rest.split("\nResponse:", 1)
            out.append({"split": f"main2_{split}", "task": head.strip(), "prompt": obj.strip(),
                        "response": rest.rsplit("\nScore:", 1)[0].strip(), "score": int(r["completion"]) / 10})
        except (json.JSONDecodeError, KeyError, ValueError, TypeError, AttributeError) as e:
            raise CrevalError(f"{f}: line {i + 1} is not an Ocsai-1 row ({type(e).__name__}: {e})",
                              'expected {"prompt": "AUT Prompt:<object>\\nResponse:<use>\\nScore:\\n", '
                              '"completion": "<score x 10>"}') from None
    return out


def load_ocsai(n: int | None = None, objects: int | None = 2, split: str = "main2_test", seed: int = 0,
               given: str | Path | None = None) -> pd.DataFrame:
    """Human-rated AUT responses of Ocsai-1 (``split`` in main2_train/main2_val/main2_test, AUT task only).

    Returns ``item_id, source, prompt (the object), response, score`` (1-5, higher = more original). Keeps the
    ``objects`` most frequent objects of the split and draws ``n`` responses spread evenly over them (seeded,
    without replacement; duplicates of the same (object, response) pair are removed first). ``source`` is
    ``ocsai1``, or ``sample`` for the bundled illustrative sample; ``df.attrs["source"]`` says where from."""
    want = split.removeprefix("main2_")
    if want not in SPLITS:
        raise CrevalError(f"unknown Ocsai-1 split {split!r}", "use main2_test, main2_val or main2_train")
    src = source(given, allow_download=True)
    rows = []
    for s in SPLITS:   # row numbers (item ids) count over train, val, test as in ocsai1_all_flat.csv
        f = file_of(DATASET, src, f"ocsai_{s}", required=(s == want and not src.is_sample))
        rows.extend(_ocsai_rows(f, s) if f is not None else [])
    df = pd.DataFrame(rows, columns=["split", "task", "prompt", "response", "score"])
    df["item_id"] = [f"ocsai-{i}" for i in df.index]
    df = df[(df["split"] == split) & (df["task"] == "AUT") & (df["response"] != "")]
    if df.empty:
        raise CrevalError(f"{src}: no AUT rows in split {split!r}", "use split main2_test, main2_val or main2_train")
    df = df.drop_duplicates(subset=["prompt", "response"]).copy()
    df["source"] = "sample" if src.is_sample else "ocsai1"
    out = _spread(df[["item_id", "source", "prompt", "response", "score"]], n, objects, seed)
    out.attrs["source"] = str(src)
    return out


def number_or_nan(v) -> float:
    """A rating as a float; NaN where the cell holds none (the rater left it blank)."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def load_cambridge(n: int | None = None, objects=OBJECTS, seed: int = 0,
                   given: str | Path | None = None, raters: bool = False) -> pd.DataFrame:
    """Cambridge AUT responses with the ``average`` originality of their raters (0-4).

    Returns ``item_id, source, prompt, response, score, n_raters``; ``n`` responses spread evenly over
    ``objects`` (duplicate responses of an object removed). ``source`` is ``cambridge`` or ``sample``.
    ``raters=True`` adds the columns ``rater1, rater2, rater3`` (floats, NaN where a rater is missing)."""
    src = source(given, allow_download=True)
    frames = []
    for obj in objects:
        if f"cambridge_{obj}" not in DATASET.files:
            raise CrevalError(f"no Cambridge AUT file for object {obj!r}", f"use objects from {OBJECTS}")
        f = file_of(DATASET, src, f"cambridge_{obj}")
        recs = []
        for r in read_any(f):
            if "Responses" not in r or "average" not in r:
                raise CrevalError(f"{f}: Cambridge AUT rows need the columns 'Responses' and 'average'",
                                  f"found columns {sorted(r)}")
            resp, avg = r.get("Responses"), r.get("average")
            if resp is None or avg in (None, "") or str(resp).strip() == "":
                continue
            marks = [r.get(k) for k in ("rater1", "rater2", "rater3")]
            rid = r.get("id")
            rid = int(rid) if isinstance(rid, float) and rid.is_integer() else rid
            recs.append({"item_id": f"cambridge-{obj}-{rid}", "source": "sample" if src.is_sample else "cambridge",
                         "prompt": obj, "response": str(resp).strip(), "score": float(avg),
                         "n_raters": sum(v not in (None, "") for v in marks),
                         **({f"rater{i + 1}": number_or_nan(v) for i, v in enumerate(marks)} if raters else {})})
        frames.append(pd.DataFrame(recs).drop_duplicates(subset=["response"]))
    out = _spread(pd.concat(frames, ignore_index=True), n, None, seed)
    out.attrs["source"] = str(src)
    return out
