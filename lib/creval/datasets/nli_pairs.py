"""Our own entailment / paraphrase pairs (``data/samples/entailment/pairs.tsv``): 50 pairs written for this
project (not taken from SICK, MSRP or any corpus), so NLI agreement can be measured on a machine that has
neither. Kinds: P paraphrase (18), E one-way entailment (8), N related but neutral (10), C contradiction
(8), U unrelated (6). Small and easy: a sanity check of a backend, not a benchmark.

Rows are ``(sentence_A, sentence_B, label, paraphrase)``: ``label`` of A -> B in entailment/neutral/contradiction
and ``paraphrase`` 1 when each sentence entails the other.
"""
from __future__ import annotations

import csv
from pathlib import Path

from creval.core import paths
from creval.core.errors import CrevalError
from creval.core.io import read_csv_rows

LABELS = ("entailment", "neutral", "contradiction")


def sample_file() -> Path:
    return paths.samples_dir() / "entailment" / "pairs.tsv"


def read_nli_sample() -> list[tuple[str, str, str, int]]:
    f = sample_file()
    out = []
    for i, r in enumerate(read_csv_rows(f, delimiter="\t", quoting=csv.QUOTE_NONE, encoding="utf-8")):
        lab = str(r.get("entailment") or "").strip().lower()
        if lab not in LABELS or str(r.get("paraphrase")) not in ("0", "1"):
            raise CrevalError(f"{f}: row {i + 1} needs entailment in {LABELS} and paraphrase 0/1", "fix the row")
        out.append((r["sentence_A"], r["sentence_B"], lab, int(r["paraphrase"])))
    return out
