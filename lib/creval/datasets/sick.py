"""SICK 2014 (SemEval-2014 Task 1; CC BY-NC-SA 3.0): sentence pairs with a 3-way entailment label.

Used to train the ``minilm-sick`` NLI cross-encoder (train, trial) and to measure NLI backends (test).
Found through :mod:`creval.datasets.base` (env ``CREVAL_SICK_DIR``, staged
``../shared/data/entailment_paraphrase/sick2014``); downloaded from ``brmson/dataset-sts`` (commit e1d3375,
``data/sts/sick2014/``) with pinned sha256s. There is no bundled sample: when SICK cannot be had,
:func:`source` raises a :class:`CrevalError` and the NLI loader falls back (see
:func:`creval.measures.nli.backends.load_nli`).

Rows are ``(sentence_A, sentence_B, label)`` with label one of ``entailment``, ``neutral``, ``contradiction``
(lower case, the values of :class:`creval.measures.nli.backends.Label`).
"""
from __future__ import annotations

import csv
from pathlib import Path

from creval.core.errors import CrevalError
from creval.core.io import read_csv_rows
from creval.datasets.base import Dataset, Remote, Source, file_of, resolve

_RAW = "https://raw.githubusercontent.com/brmson/dataset-sts/e1d3375f5b3bc24f21aa4e46f96eb379e9fc1081/data/sts/sick2014"
FILES = {"train": "SICK_train.txt", "trial": "SICK_trial.txt", "test": "SICK_test_annotated.txt"}
_SHA = {"train": "266cf8047149bd1d68138dd30439f3122bff30069740ac6705bb6197d9f1b48e",
        "trial": "5a88cfb62f8c6bd2a3cce0f2421ba2cb8c2be5ab4a800f6f01e2c64aafb7db56",
        "test": "2b8aa806658d6fc23c6824c83776c2d4fee7556000817b5ec0f982861413b7d0"}
LABELS = ("entailment", "neutral", "contradiction")

DATASET = Dataset(
    name="sick", env="CREVAL_SICK_DIR", shared="entailment_paraphrase/sick2014",
    files={k: (v,) for k, v in FILES.items()}, required=tuple(FILES),
    remotes=tuple(Remote(f"{_RAW}/{FILES[k]}", _SHA[k], FILES[k]) for k in FILES),
    sample=False,
    how="set CREVAL_SICK_DIR to a folder holding SICK_train.txt, SICK_trial.txt and SICK_test_annotated.txt "
        "(e.g. brmson/dataset-sts data/sts/sick2014), or run once with internet access")


def source(given: str | Path | None = None, allow_download: bool = False) -> Source:
    return resolve(DATASET, given, allow_download=allow_download)


def read_sick(split: str = "train", given: str | Path | None = None) -> list[tuple[str, str, str]]:
    """SICK pairs ``(sentence_A, sentence_B, label)`` of ``split`` in train/trial/test."""
    if split not in FILES:
        raise CrevalError(f"unknown SICK split {split!r}", "use train, trial or test")
    f = file_of(DATASET, source(given, allow_download=True), split)
    out = []
    for i, row in enumerate(read_csv_rows(f, delimiter="\t", quoting=csv.QUOTE_NONE, encoding="utf-8")):
        lab = str(row.get("entailment_judgment") or "").strip().lower()
        if lab not in LABELS or row.get("sentence_A") is None or row.get("sentence_B") is None:
            raise CrevalError(f"{f}: row {i + 2} is not a SICK pair (sentence_A, sentence_B, entailment_judgment)",
                              "replace the file with the original SICK release")
        out.append((row["sentence_A"], row["sentence_B"], lab))
    return out
