"""One naming rule for the studies' parameters, and the old names kept as aliases (issue 44)."""
import dataclasses
import inspect

import pytest

from creval.book.execute import merge_injected
from creval.book.params import load_params
from creval.core.errors import CrevalError
from creval.core.paths import params_dir
from creval.studies import config
from creval.studies.convergent.config import ConvergentConfig
from creval.studies.divergent.config import DivergentConfig
from creval.studies.registry import STUDIES, check_params, misnamed_keys, renames
from creval.studies.reportcard.config import ReportCardConfig
from creval.studies.validation.config import ValidationConfig


@pytest.fixture
def said(monkeypatch, capsys):
    """What the aliases said on stderr (each old name is said once per process: start afresh)."""
    monkeypatch.setattr(config, "_SAID", set())
    return lambda: [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("creval: parameter")]


@pytest.mark.parametrize("name", list(STUDIES))
def test_every_key_follows_the_naming_rule(name):
    cfg = STUDIES[name].config
    bad = misnamed_keys(name)
    assert not bad, (f"study {name}: parameter {bad[0]!r} does not start with {cfg.prefix!r}; rename it in "
                     f"{inspect.getsourcefile(cfg)} and keep the old name in its Config's `renamed`")


def test_the_rule_catches_a_key_without_the_prefix(monkeypatch):
    @dataclasses.dataclass(frozen=True)
    class Loose(DivergentConfig):
        limitless: int = 1
        aut_items: int = 2
    monkeypatch.setitem(STUDIES, "divergent", dataclasses.replace(STUDIES["divergent"], config=Loose))
    assert Loose.prefix == "divergent_" and misnamed_keys("divergent") == ["limitless", "aut_items"]
    monkeypatch.setattr(Loose, "shares", ("aut",))
    assert misnamed_keys("divergent") == ["limitless"]            # aut's key, shared with its meaning
    assert config.Config.prefix == "" and STUDIES["rethinking"].config.prefix == "rethink_"


def test_every_old_name_is_no_key_and_its_new_name_is_one():
    keys = {k for s in STUDIES.values() for k in s.config.keys()}
    pairs = renames()
    assert ("limit", "divergent_limit") in pairs and ("temperature", "apparatus_temperature") in pairs
    assert ("temperature", "divergent_temperature") in pairs
    assert all(old not in keys and new in keys for old, new in pairs)


def test_an_old_name_gives_the_same_config_and_run_id_and_is_said_once(said):
    old = DivergentConfig.from_params({"limit": 5, "n_samples": 3, "nli": "minilm-cosine"})
    new = DivergentConfig.from_params({"divergent_limit": 5, "divergent_n_samples": 3,
                                       "divergent_nli": "minilm-cosine"})
    assert old == new and old.run_id == new.run_id and old.divergent_limit == 5
    DivergentConfig.from_params({"limit": 6})
    lines = said()
    said_limit = "creval: parameter 'limit' is now 'divergent_limit' (the old name still works; see CHANGELOG)"
    assert lines.count(said_limit) == 1
    assert len(lines) == 3


def test_the_new_name_wins_over_the_old(said):
    assert DivergentConfig.from_params({"limit": 9, "divergent_limit": 4}).divergent_limit == 4
    assert ConvergentConfig.from_params({"judge_k": 2, "convergent_judge_k": 7}).convergent_judge_k == 7


def test_the_run_id_hashes_the_old_names():
    cfg = ValidationConfig.from_params({"divergent_limit": 7, "validation_n_large": 9})
    ident = cfg.identity()
    assert ident["limit"] == 7 and ident["n_large"] == 9 and "divergent_limit" not in ident
    card = ReportCardConfig.from_params({"divergent_limit": 4})
    assert card.upstream_params == {"divergent_limit": 4} and card.identity()["upstream_params"] == {"limit": 4}


@pytest.mark.parametrize("profile", ["smoke", "paper"])
def test_a_profile_written_with_old_names_names_the_same_runs(profile, said):
    params = load_params(params_dir() / f"{profile}.yaml")
    back = {}
    for old, new in renames():
        back.setdefault(new, old)
    as_before = {back.get(k, k): v for k, v in params.items()}
    assert as_before != params and params.items() <= check_params(as_before).items()
    for name, s in STUDIES.items():
        assert s.make_config(as_before).run_id == s.make_config(params).run_id, name


def test_check_params_accepts_an_old_name_and_a_typo_keeps_its_error(said):
    assert check_params({"limit": 3, "cambridge_items": 5}) == {"divergent_limit": 3, "aut_cambridge_items": 5}
    with pytest.raises(CrevalError, match="unknown parameter 'divergent_limt'"):
        check_params({"divergent_limt": 3})
    with pytest.raises(CrevalError, match="parameter 'divergent_limit' .*must be int"):
        check_params({"limit": "three"})


def test_an_old_override_beats_the_files_new_name(tmp_path, said):
    f = tmp_path / "p.yaml"
    f.write_text("divergent_limit: 2\nengine: vllm\n")
    assert load_params(f, ["limit=5"]) == {"divergent_limit": 5, "apparatus_engine": "vllm"}


def test_chapter_params_with_old_names(said):
    handed = ValidationConfig.chapter_params({"limit": 5, "n_large": 8, "cambridge_items": 3, "draws": 7})
    assert handed["validation_n_large"] == 8 and handed["aut_cambridge_items"] == 3 and handed["validation_draws"] == 7
    assert handed["upstream_params"] == {"divergent_limit": 5} and "limit" not in handed
    cfg = ValidationConfig.from_params({"upstream_params": {"limit": 5, "temperature": 0.5}, "h2_limit": 2})
    assert cfg.divergent().divergent_limit == 5 and cfg.divergent().divergent_temperature == 0.5
    assert cfg.validation_h2_limit == 2


def test_papermill_injected_old_names_land_on_the_new_keys(said):
    cell = 'divergent_limit = 2                # problems per domain\nnli_eval = 1\n'
    merged = merge_injected(cell, "limit = 7\nmodel = 'x'\n")
    assert merged.splitlines()[0].startswith("divergent_limit = 7") and "# problems per domain" in merged
    assert "limit = 7" not in merged.replace("divergent_limit = 7", "") and "model = 'x'" in merged
