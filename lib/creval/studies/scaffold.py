"""The files ``creval new-study`` writes (:mod:`creval.commands.new_study`), as ``string.Template`` texts: the
study's package (:data:`TEMPLATES`; with ``--calls-model`` :data:`MODEL_FILES`, which adds one question to the
model per table read) and the unit test of its report (:data:`REPORT_TEST`)."""
from __future__ import annotations

# the files of a new study's package (string.Template: ${name}, ${cls}, ${title}, ${chapter}, ${reads_repr}, ...)
TEMPLATES = {
    "__init__.py": '''"""${title}: ${summary}."""
${phase_import}from creval.studies.contract import Study
from creval.studies.${name} import estimate, run
from creval.studies.${name}.config import ${cls}Config
from creval.studies.${name}.records import CountRecord

STUDY = Study("${name}", "${chapter}", ${cls}Config, run.run, reads=${reads_repr},
              tables={"counts": CountRecord},           # every table the run writes, with its row type
              estimate=estimate.estimate,${phases}
              summary="${summary}")
''',
    "config.py": '''"""Parameters of the ${name} study: its own keys start with ``${name}_``; those of the studies it
reads reach it by composition (``upstream_params``, :class:`creval.studies.reader.ReaderConfig`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from creval.studies.config import identity
from creval.studies.reader import ReaderConfig


@dataclass(frozen=True)
class ${cls}Config(ReaderConfig):
    """The ${name} study: what it reads of ${reads_list} (``${name}_limit`` rows of each table)."""
    study: ClassVar[str] = "${name}"
    ${name}_limit: int = identity(0)   # rows read from each table of the studies read, 0 for all
''',
    "records.py": '''"""Typed rows of the ${name} study's tables: one record type per table."""
from __future__ import annotations

from dataclasses import dataclass

from creval.core.records import Record


@dataclass
class CountRecord(Record):
    study: str         # the study read
    table: str         # one of its tables
    rows: int          # rows read (at most ${name}_limit when it is not 0)
    columns: int       # columns of the table
''',
    "run.py": '''"""The ${name} study's run: read the records of ${reads_list} (each runs first only if its folder is
not finished) and write the ``counts`` table. It calls no model; a study that does runs its calls as units
(:func:`creval.core.units.run_units`, see docs/CONTRIBUTING.md)."""
from __future__ import annotations

from pathlib import Path

from creval.studies import contract
from creval.studies.${name}.records import CountRecord
from creval.studies.registry import upstream_records


def count_rows(study: str, recs, limit: int) -> list[dict]:
    """One ``counts`` row per table of ``recs`` (rows capped at ``limit`` unless it is 0)."""
    out = []
    for table in recs.tables:
        df = recs[table]
        rows = min(len(df), limit) if limit else len(df)
        out.append(CountRecord(study, table, rows, len(df.columns)).to_dict())
    return out


def run(cfg) -> Path:
    store = contract.start(cfg)
    rows = [r for study, recs in upstream_records(cfg).items() for r in count_rows(study, recs, cfg.${name}_limit)]
    store.write("counts", rows)
    return contract.finish(store)
''',
    "estimate.py": '''"""What a ${name} run costs before any call: nothing of its own (it reads records)."""
from __future__ import annotations

from creval.studies.estimate.parts import Estimate


def estimate(cfg) -> Estimate:
    return Estimate("${name}", [], ["reads the records of ${reads_list}: no call of its own"])
''',
    "report.py": '''"""Pure: the ${name} study's records in, a captioned table out."""
from __future__ import annotations

import pandas as pd

from creval.studies.tables import captioned

COLUMNS = ["study", "table", "rows", "columns"]


def by_table(recs) -> pd.DataFrame:
    """Rows and columns of every table read, one row per study and table."""
    df = recs.counts
    if not len(df):
        return captioned(pd.DataFrame(columns=COLUMNS), "No table was read")
    return captioned(df[COLUMNS].sort_values(["study", "table"]).reset_index(drop=True),
                     "Rows and columns of every table read")
''',
}


# --calls-model: the same study, and the model under test asked one question per table read, as units
COUNT_ROWS = TEMPLATES["run.py"][TEMPLATES["run.py"].index("def count_rows"):TEMPLATES["run.py"].index("def run(cfg)")]
MODEL_FILES = {
    "__init__.py": TEMPLATES["__init__.py"].replace(
        'from creval.studies.${name}.records import CountRecord',
        'from creval.studies.${name}.records import AnswerRecord, CountRecord').replace(
        'tables={"counts": CountRecord},           # every table the run writes, with its row type',
        'tables={"counts": CountRecord, "answers": AnswerRecord},   # every table the run writes, its row type'),
    "config.py": TEMPLATES["config.py"].replace(
        "    ${name}_limit: int = identity(0)   # rows read from each table of the studies read, 0 for all\n",
        "    ${name}_limit: int = identity(0)   # rows read from each table of the studies read, 0 for all\n"
        "    ${name}_max_tokens: int = identity(96)   # the reply's budget for each question to the model\n"),
    "records.py": TEMPLATES["records.py"] + '''

@dataclass
class AnswerRecord(Record):
    study: str         # the study read
    table: str         # the table the model was asked about
    answer: str        # its reply; "" when none was usable
    state: str         # "answered", or "unparsed": every try came back empty or cut by its budget
    attempts: int      # tries made (1 + re-asks)
''',
    "run.py": '''"""The ${name} study's run: read the records of ${reads_list} (each runs first only if its folder is
not finished), write the ``counts`` table, then ask the model under test about each table read, one unit per
table (several at once where the model allows; an interrupted run resumes), into the ``answers`` table."""
from __future__ import annotations

from pathlib import Path

from creval.core.units import Unit, run_units
from creval.models import registry
from creval.models.width import width
from creval.studies import contract
from creval.studies.${name}.records import AnswerRecord, CountRecord
from creval.studies.registry import upstream_records


''' + COUNT_ROWS + '''def question(table: str, columns: list[str]) -> list[dict]:
    """The one question asked about a table (replace it by your study's prompt)."""
    return [{"role": "user", "content": f"In one sentence, what might a table '{table}' ({', '.join(columns)}) hold?"}]


def answer(model, study: str, table: str, columns: list[str], max_tokens: int) -> AnswerRecord:
    """The model's reply; asked again (at most twice, sampled) while it is empty or cut by its budget, then
    ``unparsed``: such a reply is never recorded as an answer."""
    for attempt in range(3):
        got = model.chat(question(table, columns), temperature=0.7 if attempt else 0.0, max_tokens=max_tokens,
                         seed=attempt)
        if got.text.strip() and got.finish_reason != "length":
            return AnswerRecord(study, table, got.text.strip(), "answered", attempt + 1)
    return AnswerRecord(study, table, "", "unparsed", 3)


def run(cfg) -> Path:
    store = contract.start(cfg)
    read = upstream_records(cfg)
    rows = [r for study, recs in read.items() for r in count_rows(study, recs, cfg.${name}_limit)]
    store.write("counts", rows)
    model = registry.load_model(cfg.model)
    store.note_model(model)
    todo = [Unit(f"{r['study']}/{r['table']}", (r["study"], r["table"], list(read[r["study"]][r["table"]])))
            for r in rows]

    def work(unit: Unit) -> dict[str, list]:
        study, table, columns = unit.item
        return {"answers": [answer(model, study, table, columns, cfg.${name}_max_tokens).to_dict()]}
    got = run_units(cfg.run_dir, "answers", todo, work, width=width(cfg.model))
    store.write("answers", got.get("answers", []))
    return contract.finish(store)
''',
    "estimate.py": '''"""What a ${name} run costs before any call: a question per table read, up to 2 re-asks each."""
from __future__ import annotations

from creval.studies.estimate.parts import Estimate, Phase, Range, calls, msg_toks
from creval.studies.${name}.run import question
from creval.studies.registry import STUDIES


def estimate(cfg) -> Estimate:
    tables = [t for s in ${reads_repr} for t in STUDIES[s].tables]
    part = calls("model", cfg.model, "a question per table", Range(len(tables), 3 * len(tables)),
                 msg_toks(question("table", ["a", "b", "c"])), cfg.${name}_max_tokens)
    return Estimate("${name}", [Phase("answers", len(tables), Range(1, 3), (part,))])
''',
}

PHASE_IMPORT = "from creval.models.capabilities import ModelPhase\n"
PHASES = '\n              phases=(ModelPhase("answers", "model", ("chat",)),),   # its model calls: name, role, verbs'


REPORT_TEST = '''"""The ${name} study's report: records in, a captioned table out (no run, no call)."""
import pandas as pd

from creval.studies.${name} import report


class Recs:
    """Records as the report reads them: only the tables it reads."""

    def __init__(self, counts):
        self.counts = pd.DataFrame(counts, columns=report.COLUMNS)


def test_the_table_lists_every_table_read():
    df = report.by_table(Recs([("divergent", "steps", 3, 5), ("divergent", "problems", 1, 4)]))
    assert list(df["table"]) == ["problems", "steps"] and df.attrs["caption"]


def test_nothing_read_is_an_empty_table_that_says_so():
    df = report.by_table(Recs([]))
    assert not len(df) and list(df.columns) == report.COLUMNS and df.attrs["caption"]
'''
"""The unit test written beside a new study (``tests/unit/test_<name>_report.py``): its report on records made up
in the test; keep it true as the report grows."""
