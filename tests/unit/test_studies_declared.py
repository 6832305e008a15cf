"""A study is one declared thing (issue 35): every study package declares its STUDY, the registry discovers
them and orders them by their reads, Records refuse an undeclared table, and a study without an estimator is
priced with a line that says so."""
import dataclasses
import importlib
import json
import pkgutil
from dataclasses import dataclass
from typing import ClassVar

import pandas as pd
import pytest

import creval.studies
from creval.core.errors import CrevalError, ThinRecords
from creval.core.records import Record, column, optional, spread
from creval.studies.card import COLUMNS, SOURCE
from creval.studies.config import Config
from creval.studies.contract import Records, Study, UndeclaredTable
from creval.studies.estimate import estimate
from creval.studies.registry import STUDIES, discover, ordered, plugin, upstream_configs
from creval.studies.reportcard.config import ReportCardConfig
from creval.studies.reportcard.records import CardRecord
from creval.studies.tables import computed, guarded


@dataclass(frozen=True)
class ToyConfig(Config):
    study: ClassVar[str] = "toy"


@dataclass
class Row(Record):
    a: int
    b: str


def toy(**kw) -> Study:
    return Study(**{"name": "toy", "chapter": "chapters/99-toy.ipynb", "config": ToyConfig,
                    "run": lambda cfg: cfg.run_dir, "tables": {"items": Row}, **kw})


def test_every_study_package_declares_its_study_and_is_found():
    packages = [m.name for m in pkgutil.iter_modules(creval.studies.__path__)
                if m.ispkg and m.name != "estimate"]
    assert len(packages) >= 9 and sorted(s.name for s in discover()) == sorted(packages)
    for name in packages:
        where = f"lib/creval/studies/{name}/__init__.py"
        s = importlib.import_module(f"creval.studies.{name}").STUDY
        assert s.name == name == s.config.study and s.package == f"creval.studies.{name}", \
            f"{where}: the Study's name, its Config's study and the package's name must be the same"
        assert s.tables and all(issubclass(k, Record) for k in s.tables.values()), \
            f"{where}: declare every table with a Record type in tables="


def test_every_study_reads_only_studies_whose_chapters_come_before_its_own():
    names = list(STUDIES)
    for s in STUDIES.values():
        assert all(names.index(up) < names.index(s.name) for up in s.reads), s.name
        later = [up for up in s.reads if STUDIES[up].chapter >= s.chapter]
        assert not later, (f"{s.name} reads {later}, whose chapter does not come before {s.chapter}: "
                           f"number its chapter after theirs in {s.package.replace('.', '/')}/__init__.py")
    assert [s.name for s in STUDIES.values()] == [s.name for s in ordered(list(STUDIES.values()))]
    a, b = toy(name="a", chapter="chapters/01.ipynb", reads=("b",)), toy(name="b", chapter="chapters/98.ipynb")
    assert [s.name for s in ordered([a, b])] == ["b", "a"]
    with pytest.raises(CrevalError, match="reads 'nowhere'"):
        ordered([toy(reads=("nowhere",))])
    with pytest.raises(CrevalError, match="circle: a -> b -> a"):
        ordered([toy(name="a", reads=("b",)), toy(name="b", reads=("a",))])


def test_upstream_configs_follow_the_declared_reads():
    cfg = ReportCardConfig.from_params({"model": "m1", "divergent_limit": 3})
    up = cfg.upstream()
    assert tuple(up) == STUDIES["reportcard"].reads == ("convergent", "validation", "rethinking", "aut", "humansets",
                                                        "judges")
    assert all(c.model == "m1" for c in up.values()) and up["convergent"].divergent().divergent_limit == 3
    assert upstream_configs(cfg, model="m2")["aut"].model == "m2"


def test_records_refuse_an_undeclared_table_and_type_the_declared_ones(tmp_path):
    (tmp_path / "items.jsonl").write_text(json.dumps({"a": 1, "b": "x", "extra": 0}) + "\n")
    recs = Records(tmp_path, tables={"items": Row, "empty": dict})
    assert recs.items["a"].tolist() == [1] and recs.typed("items") == [Row(1, "x")]
    assert recs.empty.empty                                        # declared, not written: an empty table
    with pytest.raises(UndeclaredTable, match="no table 'row'"):
        recs.row                                                   # a misspelt name is an error, not empty
    assert not hasattr(recs, "row")                                # still an AttributeError for hasattr
    assert Records(tmp_path).row.empty                             # no declaration: every name reads


def test_a_run_that_writes_an_undeclared_table_fails(tmp_path):
    (tmp_path / "items.jsonl").write_text("")
    (tmp_path / "calls.jsonl").write_text("")
    toy().check_tables(tmp_path)                                   # items declared, calls is not a table
    (tmp_path / "stray.jsonl").write_text("")
    with pytest.raises(CrevalError, match="wrote table 'stray', which it does not declare"):
        toy().check_tables(tmp_path)


def test_a_run_that_writes_a_column_its_record_does_not_declare_fails(tmp_path):
    f = tmp_path / "items.jsonl"
    f.write_text(json.dumps({"a": 1, "b": "x"}) + "\n" + json.dumps({"a": 2, "b": "y", "c": 3}) + "\n")
    with pytest.raises(CrevalError, match=r"items.jsonl row 2: column 'c' is not a field of Row"):
        toy().check_tables(tmp_path)
    f.write_text(json.dumps({"a": 1}) + "\n")
    with pytest.raises(CrevalError, match=r"row 1: column 'b' of Row is missing"):
        toy().check_tables(tmp_path)
    f.write_text(json.dumps({"a": 1, "b": "x"}) + "\n")
    toy().check_tables(tmp_path)


@dataclass
class Wide(Record):
    """A record with every kind of field: plain, renamed, optional and spread."""
    id: str
    n_people: int = column("n people", 0)
    note: str | None = optional()
    uniq: dict = spread("uniq_")


def test_optional_and_spread_columns_round_trip_and_are_checked():
    row = {"id": "t1", "n people": 3, "uniq_2": 0.5, "uniq_10": 1.0}
    w = Wide.from_dict(row)
    assert w == Wide("t1", 3, None, {"2": 0.5, "10": 1.0}) and w.to_dict() == row   # no "note": it is None
    assert Wide.from_dict({**row, "note": "n"}).to_dict() == {**row, "note": "n"}
    assert Wide.row_problem(row) == "" and Wide.row_problem({**row, "uniq_3": 0.2}) == ""
    assert Wide.row_problem({**row, "n_people": 3}) == "column 'n_people' is not a field of Wide"
    assert Wide.row_problem({"n people": 1}) == "column 'id' of Wide is missing"


def test_a_study_without_an_estimator_is_priced_with_a_line_not_a_key_error(monkeypatch):
    monkeypatch.setitem(STUDIES, "toy", toy())
    est = estimate(ToyConfig())
    assert est.study == "toy" and est.units == 0 and "no estimate" in est.notes[0]
    assert STUDIES["divergent"].estimator().__module__ == "creval.studies.divergent.estimate"
    monkeypatch.setitem(STUDIES, "toy", toy(estimate=lambda cfg: "priced"))
    assert estimate(ToyConfig()) == "priced"


def test_every_study_declares_its_estimate_in_one_place():
    undeclared = [f"lib/{s.package.replace('.', '/')}/__init__.py" for s in STUDIES.values() if s.estimate is None]
    assert not undeclared, f"declare estimate=estimate.estimate in {undeclared}"
    assert STUDIES["compare"].estimate.__module__ == "creval.studies.compare.estimate"


def test_a_plugin_that_does_not_import_says_how_to_fix_it():
    with pytest.raises(CrevalError, match="(?s)CREVAL_STUDIES names .no_such_study_pkg.*PYTHONPATH"):
        plugin("no_such_study_pkg")


def test_the_card_record_writes_the_chapter_columns():
    assert list(CardRecord.columns().values()) == COLUMNS + SOURCE
    row = {**{c: i for i, c in enumerate(COLUMNS)}, "source_study": "s", "source_table": "t",
           "source_filters": {"a": 1}}
    assert CardRecord.from_dict(row).to_dict() == row
    assert dataclasses.is_dataclass(CardRecord)


def test_the_report_guard_falls_back_on_thin_records_only(tmp_path):
    (tmp_path / "items.jsonl").write_text(json.dumps({"a": 1, "b": "x"}) + "\n")
    recs = Records(tmp_path, tables={"items": Row, "later": Row})

    def thin(recs) -> pd.DataFrame:
        """The c column."""
        return recs.written("items", "c")

    def unwritten(recs) -> str:
        """The later rows."""
        return str(len(recs.written("later")))

    def misspelt(recs) -> pd.DataFrame:
        """The items."""
        return recs.itmes

    def typo(recs) -> pd.DataFrame:
        """The c column, read without asking whether it was written."""
        return recs.items[["c"]]
    assert guarded(thin)(recs).attrs["missing"] == "the items rows have no 'c'"     # "not computed", saying why
    said = "*The later rows: not computed from these records (the run wrote no later rows).*"
    assert guarded(unwritten)(recs) == said
    with pytest.raises(UndeclaredTable, match="no table 'itmes'"):
        guarded(misspelt)(recs)
    with pytest.raises(KeyError, match="'c'"):                      # a bug in a report raises, never "not computed"
        guarded(typo)(recs)
    with pytest.raises(ThinRecords, match="the items rows have no 'c'"):    # a report built on a thin one
        computed(guarded(thin)(recs))
    assert computed({"a": 1.0}) == {"a": 1.0}
    (tmp_path / "manifest.json").write_text(json.dumps({"usage": {}}))
    assert recs.manifest_with("usage") == {"usage": {}}
    with pytest.raises(ThinRecords, match="manifest has no 'git_commit'"):
        recs.manifest_with("usage", "git_commit")
