"""``creval new-human-set NAME``: declare a new set of human judgment (issue 63). It writes the set's loader
``lib/creval/datasets/<NAME>.py`` (a :class:`~creval.datasets.rated.HumanSet` over one long CSV, one row per text
and rater, with the fallback chain), a small sample ``data/samples/<NAME>/`` to replace by real data or keep as the
fresh-clone path, and ``tests/unit/test_<NAME>_set.py``. Nothing else: the human-sets study (chapter 07b) and the
report card find every declared set, so the set gets its card rows, its ceiling and its chapter rows from the
declaration alone. docs/human-sets.md says what to edit next."""
from __future__ import annotations

import csv
import re
from string import Template

from creval.core import paths
from creval.core.errors import CrevalError
from creval.studies.humansets.sets import discover

NAME = re.compile(r"^[a-z][a-z0-9_]*$")

LOADER = '''"""$title: a set of human judgment declared for creval (written by ``creval new-human-set``; edit it).

File (env ``CREVAL_${upper}_DIR``, staged ``../shared/data/$name``, else the bundled sample ``data/samples/$name/``):
``${name}_ratings.csv``, one row per text and rater, in the columns of :data:`creval.datasets.rated.LONG` and one
column per criterion. Give ``remotes`` a pinned URL and sha256 once the data is public, say who the raters are in
``rater_kind`` (expert, lay, crowd) and mark the criteria nearest to creativity ``creative=True``.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from creval.core.errors import CrevalError
from creval.datasets.base import Dataset, Source, check_pins, file_of, resolve
from creval.datasets.rated import LONG, Criterion, HumanSet, check_long

FILE = "${name}_ratings.csv"
DATASET = Dataset(name="$name", env="CREVAL_${upper}_DIR", shared="$name", files={"ratings": (FILE,)},
                  required=("ratings",), how=f"set CREVAL_${upper}_DIR to a folder holding {FILE}", unit="prompt",
                  unit_why="texts answering one prompt share it; prompts are resampled whole")
CRITERIA = (Criterion("creativity", "Creativity", 1, 5, creative=True),)


def load(given: str | Path | None = None, allow_download: bool = True) -> tuple[pd.DataFrame, Source]:
    """The long table (:mod:`creval.datasets.rated`): one row per text and rater."""
    src = resolve(DATASET, given, allow_download=allow_download)
    check_pins(DATASET, src)
    f = file_of(DATASET, src, "ratings")
    try:
        df = pd.read_csv(f, keep_default_na=False)
    except (OSError, ValueError) as e:
        raise CrevalError(f"$name: cannot read {f} ({e})", DATASET.how) from None
    missing = [c for c in (*LONG, *(c.column for c in CRITERIA)) if c not in df]
    if missing:
        raise CrevalError(f"$name: {f} has no column {', '.join(missing)}", DATASET.how)
    for c in CRITERIA:
        df[c.column] = pd.to_numeric(df[c.column], errors="raise")
    return check_long(df, SET), src


SET = HumanSet("$name", "$title", DATASET, CRITERIA, load, rater_kind="lay", short="$title",
               why=DATASET.unit_why, cite="")
'''

TEST = '''"""The declared human set $name: its loader gives the long table through the fallback chain."""
from creval.datasets import $name, rated
from creval.studies.humansets.sets import discover


def test_the_set_loads_its_long_table_and_is_declared(monkeypatch):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    long, src = $name.SET.load()
    assert src.is_sample and list(long.columns) == [*rated.LONG, *(c.column for c in $name.CRITERIA)]
    assert long.groupby("id")["rater"].nunique().min() >= 2 and $name.SET.creative
    assert "$name" in discover()
'''


def register(subparsers) -> None:
    p = subparsers.add_parser("new-human-set", help="declare a new set of human ratings (for contributors)",
                              description="Write a declared set of human judgment: its loader, a small sample and "
                                          "a test; chapter 07b and the report card read it from there.")
    p.add_argument("name", help="the set's name: lower case letters, digits and _")
    p.add_argument("--title", default=None, help="its title on the card (default: the name)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    for f in create(args.name, args.title):
        print(f"wrote {f}")
    return 0


def create(name: str, title: str | None = None) -> list[str]:
    """Write the set ``name`` into this checkout; the files written."""
    repo = paths.REPO
    if not NAME.match(name):
        raise CrevalError(f"set name {name!r} is not a lower-case Python name", "use letters, digits and _")
    module, sample = repo / "lib/creval/datasets" / f"{name}.py", paths.samples_dir() / name
    test = repo / "tests/unit" / f"test_{name}_set.py"
    if name in discover() or module.exists() or sample.exists() or test.exists():
        raise CrevalError(f"a set, dataset module or sample named {name!r} exists already", "choose another name")
    fields = {"name": name, "upper": name.upper(), "title": title or name}
    module.write_text(Template(LOADER).substitute(fields))
    sample.mkdir(parents=True)
    write_sample(sample / f"{name}_ratings.csv")
    test.write_text(Template(TEST).substitute(fields))
    return [str(p.relative_to(repo)) for p in (module, sample / f"{name}_ratings.csv", test)]


def write_sample(path) -> None:
    """Eight short texts of our own on four prompts, by a person and a model, each scored 1-5 by three made-up
    raters: it only lets the code run on a fresh clone."""
    prompts = ["a door that opens onto yesterday", "the last message from a lighthouse", "a city that forgets at noon",
               "a map drawn by a child"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "prompt", "prompt_text", "author", "kind", "text", "rater", "rater_kind", "creativity"])
        for i, p in enumerate(prompts):
            for kind, text, base in (("person", f"She opened {p} and found her own handwriting waiting there.", 4),
                                     ("model", f"This is a story about {p}. It was interesting.", 2)):
                for j, r in enumerate(("r1", "r2", "r3")):
                    w.writerow([f"t{i}-{kind}", f"p{i}", p, kind, kind, text, r, "lay", base + (j + i) % 2])
