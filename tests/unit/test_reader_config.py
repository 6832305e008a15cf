"""Chapters 08 and 09 hold the parameters of the studies they read by composition (``upstream_params``)."""
import pytest

from creval.core.errors import CrevalError
from creval.studies.aut.config import AutConfig
from creval.studies.compare.config import CompareConfig
from creval.studies.registry import all_defaults, upstream_keys
from creval.studies.reportcard.config import ReportCardConfig


def test_flat_keys_are_sorted_into_own_fields_and_upstream():
    limit = all_defaults()["divergent_limit"] + 3
    cfg = ReportCardConfig.from_params({"model": "m1", "divergent_limit": limit, "aut_items": 7, "junk": object()})
    assert cfg.model == "m1"
    assert cfg.upstream_params == {"aut_items": 7, "divergent_limit": limit}       # no own key, no undeclared one
    assert cfg.upstream()["aut"] == AutConfig.from_params({"model": "m1", "aut_items": 7})
    assert cfg.flat_params()["model"] == "m1" and cfg.flat_params()["divergent_limit"] == limit


def test_defaults_are_left_out_and_nested_values_win():
    d = all_defaults()
    assert ReportCardConfig.from_params({"divergent_limit": d["divergent_limit"],
                                         "divergent_domains": list(d["divergent_domains"])}).upstream_params == {}
    cfg = ReportCardConfig.from_params({"divergent_limit": 9, "upstream_params": {"divergent_limit": 4}})
    assert cfg.upstream_params == {"divergent_limit": 4}
    assert cfg.run_id != ReportCardConfig().run_id
    assert cfg.run_id == ReportCardConfig.from_params({"divergent_limit": 4}).run_id


def test_compare_judges_with_its_own_judge_model():
    cfg = CompareConfig.from_params({"judge_model": "jm", "convergent_judge_word_limit": 99})
    assert cfg.judge_model == "jm" and cfg.upstream_params == {"convergent_judge_word_limit": 99}
    assert {c.judge_model for c in cfg.upstream().values() if hasattr(c, "judge_model")} == {"jm"}
    assert "judge_model" in ReportCardConfig.from_params({"judge_model": "jm"}).upstream_params


@pytest.mark.parametrize("nested, says", [({"model": "m"}, "model"), ({"nope": 1}, "nope"),
                                          ({"compare_released_items": 3}, "released_items")])
def test_wrong_nested_keys_are_named(nested, says):
    cls = CompareConfig if "model" in nested else ReportCardConfig
    with pytest.raises(CrevalError, match=says):
        cls.from_params({"upstream_params": nested}, where="chapter 08")


def test_a_bad_upstream_value_is_named():
    with pytest.raises(CrevalError, match="limit"):
        ReportCardConfig.from_params({"divergent_limit": "many"})
    with pytest.raises(CrevalError, match="upstream_params"):
        ReportCardConfig.from_params({"upstream_params": [1, 2]})


def test_chapter_params_show_only_what_differs():
    d = all_defaults()
    assert "upstream_params" not in ReportCardConfig.chapter_params(d)
    p = ReportCardConfig.chapter_params({**d, "divergent_limit": d["divergent_limit"] + 1, "n_boot": 50})
    assert p["upstream_params"] == {"divergent_limit": d["divergent_limit"] + 1} and p["n_boot"] == 50
    assert set(p) <= set(ReportCardConfig.keys())


def test_the_pages_declare_few_parameters():
    for cls in (ReportCardConfig, CompareConfig):
        own = set(cls.flat_keys())
        assert len(own) < 20 and not own & (upstream_keys(cls.study) - {"run_root", "model", "models", "seed",
                                                                           "data_seed", "judge_model", "n_boot"})


def test_derived_studies_read_divergent_by_composition_with_flat_run_ids():
    from creval.studies.convergent.config import ConvergentConfig
    from creval.studies.divergent.config import DivergentConfig
    from creval.studies.validation.config import ValidationConfig
    d = all_defaults()
    for cls in (ConvergentConfig, ValidationConfig):
        assert not set(cls.flat_keys()) & (set(DivergentConfig.keys()) - {"run_root", "model", "models", "seed",
                                                                             "data_seed", "n_boot"})   # shared
        cfg = cls.from_params({**d, "divergent_limit": 5, "divergent_nli": "minilm-cosine", "model": "m"})
        assert cfg.upstream_params == {"divergent_limit": 5, "divergent_nli": "minilm-cosine"}
        assert cfg.divergent() == DivergentConfig(divergent_limit=5, divergent_nli="minilm-cosine", model="m")
        assert cfg.identity()["limit"] == 5 and "upstream_params" not in cfg.identity()
        # a chapter cell that declares the divergent keys flat (an older cell) is still handed them flat
        handed = cls.chapter_params({**d, "divergent_limit": 5})
        assert handed["divergent_limit"] == 5 and handed["upstream_params"] == {"divergent_limit": 5}
    # the report card reads convergent and validation, so the divergent keys reach it through them
    card = ReportCardConfig.from_params({"divergent_limit": 5})
    assert card.upstream()["convergent"].divergent().divergent_limit == 5
