"""Microsoft Research Paraphrase Corpus (MSR Shared Source License, non-commercial): sentence pairs
labelled paraphrase (1) or not (0). Used to measure NLI backends the way clustering uses them.

Found through :mod:`creval.datasets.base` (env ``CREVAL_MSRP_DIR``, staged
``../shared/data/entailment_paraphrase/msrp``); downloaded from ``brmson/dataset-sts`` (commit e1d3375,
``data/para/msr/``, where train and test are swapped as in recent papers and val is the last 500 train
pairs) with pinned sha256s. No bundled sample: :func:`source` raises a :class:`CrevalError` when absent.
"""
from __future__ import annotations

import csv
from pathlib import Path

from creval.core.errors import CrevalError
from creval.core.io import read_csv_rows
from creval.datasets.base import Dataset, Remote, Source, file_of, resolve

_RAW = "https://raw.githubusercontent.com/brmson/dataset-sts/e1d3375f5b3bc24f21aa4e46f96eb379e9fc1081/data/para/msr"
SPLITS = ("train", "val", "test")
_SHA = {"train": "446b9a5fa4e8d526b99f1d635f036f89063749783f5d3464ee8c1879724d406d",
        "val": "7e5d0ee4ec392b062af73c7cffe82f0725e5b08f6bfdf0915f31bbc470b8bacf",
        "test": "51a1f197d8786712d2f0d97700f5be653b7488a96cde00e158159350d23e3d90"}

DATASET = Dataset(
    name="msrp", env="CREVAL_MSRP_DIR", shared="entailment_paraphrase/msrp",
    files={s: (f"msr-para-{s}.tsv",) for s in SPLITS}, required=("test",),
    remotes=tuple(Remote(f"{_RAW}/msr-para-{s}.tsv", _SHA[s], f"msr-para-{s}.tsv") for s in SPLITS),
    sample=False,
    how="set CREVAL_MSRP_DIR to a folder holding msr-para-test.tsv (e.g. brmson/dataset-sts data/para/msr), "
        "or run once with internet access")


def source(given: str | Path | None = None, allow_download: bool = False) -> Source:
    return resolve(DATASET, given, allow_download=allow_download)


def read_msrp(split: str = "test", given: str | Path | None = None) -> list[tuple[str, str, int]]:
    """MSRP pairs ``(string_1, string_2, quality)`` (1 = paraphrase) of ``split`` in train/val/test."""
    if split not in SPLITS:
        raise CrevalError(f"unknown MSRP split {split!r}", "use train, val or test")
    f = file_of(DATASET, source(given, allow_download=True), split)
    out = []
    for i, row in enumerate(read_csv_rows(f, delimiter="\t", quoting=csv.QUOTE_NONE)):
        try:
            out.append((row["#1 String"], row["#2 String"], int(row["Quality"])))
        except (KeyError, TypeError, ValueError):
            raise CrevalError(f"{f}: row {i + 2} is not an MSRP pair (Quality, #1 String, #2 String)",
                              "replace the file with the original MSRP release") from None
    return out
