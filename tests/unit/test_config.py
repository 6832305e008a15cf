"""One Config per study: the parameter files, the chapters and the CLI cannot drift from it."""
import ast
import dataclasses
import json

import pytest
import yaml

from creval.book.execute import book_structure, merge_injected
from creval.book.params import effective_params, load_params
from creval.core.errors import CrevalError
from creval.core.paths import REPO
from creval.studies.config import run_id
from creval.studies.convergent.config import ConvergentConfig
from creval.studies.divergent.config import DivergentConfig
from creval.studies.registry import STUDIES, all_defaults, check_params, declared_keys


def _cells(chapter):
    return json.loads((REPO / chapter).read_text())["cells"]


def _parameters_cell(chapter) -> dict:
    for c in _cells(chapter):
        if "parameters" in c.get("metadata", {}).get("tags", []):
            tree = ast.parse("".join(c["source"]))
            return {n.targets[0].id: ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)}
    raise AssertionError(f"{chapter} has no parameters cell")


def test_default_profile_is_exactly_the_studies_defaults():
    assert yaml.safe_load((REPO / "params/default.yaml").read_text()) == all_defaults()


def test_every_profile_names_only_declared_keys():
    for f in sorted((REPO / "params").glob("*.yaml")):
        assert set(yaml.safe_load(f.read_text())) <= declared_keys(), f


@pytest.mark.parametrize("study", list(STUDIES))
def test_chapter_parameters_cell_repeats_its_config_defaults(study):
    chapter, cls = STUDIES[study].chapter, STUDIES[study].config
    assert chapter in [f for _, f in book_structure()]
    assert _parameters_cell(chapter) == cls.defaults()


@pytest.mark.parametrize("study", list(STUDIES))
def test_chapter_builds_its_config_from_every_parameter(study):
    chapter, cls = STUDIES[study].chapter, STUDIES[study].config
    calls = [(c, n) for c in _cells(chapter) if c["cell_type"] == "code"
             for n in ast.walk(ast.parse("".join(c["source"])))
             if isinstance(n, ast.Call) and getattr(n.func, "attr", None) == "from_params"
             and getattr(n.func.value, "id", None) == cls.__name__]
    assert len(calls) == 1, f"{chapter}: build the config once with {cls.__name__}.from_params(globals())"
    cell, call = calls[0]
    assert ast.unparse(call) == f"{cls.__name__}.from_params(globals())" and not call.keywords
    assert "hide-input" in cell["metadata"]["tags"] and cell["metadata"]["jupyter"]["source_hidden"]
    # every key the Config declares comes from the parameters cell (nothing falls back to a default unseen)
    assert set(_parameters_cell(chapter)) == set(cls.keys())
    # a kernel's globals
    ns = {**_parameters_cell(chapter), "In": [], "_": None, "table": print, "unrelated": object()}
    assert cls.from_params(ns) == cls()


def test_unknown_key_is_an_error_naming_key_and_file(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("modle: gpt-4o\ndivergent_limit: 3\n")
    with pytest.raises(CrevalError, match=r"mine.yaml: unknown parameter 'modle'"):
        load_params(f)
    f.write_text("divergent_limit: 3\n")
    with pytest.raises(CrevalError, match="unknown parameter 'n_sample'"):
        load_params(f, ["n_sample=4"])


def test_wrong_type_is_an_error_naming_the_key(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("divergent_limit: three\n")
    with pytest.raises(CrevalError, match=r"parameter 'divergent_limit' in .*p.yaml must be int, got 'three'"):
        load_params(f)
    with pytest.raises(CrevalError, match="'divergent_domains'"):
        check_params({"divergent_domains": "macgyver"})
    assert DivergentConfig.from_params({"divergent_temperature": 1}).divergent_temperature == 1.0   # an int: a float


def test_from_params_takes_declared_keys_and_keeps_defaults():
    cfg = DivergentConfig.from_params({"divergent_limit": 5, "models": ["a", "b"], "convergent_judge_k": 9})
    assert cfg.divergent_limit == 5 and cfg.models == ("a", "b") \
        and cfg.divergent_n_samples == DivergentConfig().divergent_n_samples
    conv = ConvergentConfig.from_params({"convergent_judge_k": 9, "convergent_judge_max_rounds": 3})
    assert conv.judge_params()["k"] == 9 and conv.judge_params()["max_rounds"] == 3
    assert effective_params({"divergent_limit": 5})["divergent_limit"] == 5
    assert effective_params({})["divergent_n_samples"] == 10


def test_run_root_resolves_against_the_data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path))
    assert DivergentConfig().run_path == tmp_path / "runs" / "default"
    assert DivergentConfig(run_root=str(tmp_path / "x")).run_path == tmp_path / "x"


def test_run_ids_differ_exactly_when_the_identity_does(tmp_path):
    a = DivergentConfig()
    assert a.run_id == DivergentConfig(run_root=str(tmp_path)).run_id         # where runs go is not identity
    assert a.run_id != DivergentConfig(divergent_limit=7).run_id != DivergentConfig(divergent_top_p=0.5).run_id
    assert a.run_dir == a.run_path / "divergent" / a.run_id
    assert a.identity()["study"] == "divergent" and a.identity()["nli"] in ("minilm-sick", "minilm-cosine")
    assert run_id({"x": [1, 2]}) == run_id({"x": (1, 2)}) and len(run_id({})) == 10


def test_retired_keys_name_their_successor(tmp_path):
    f = tmp_path / "old.yaml"
    f.write_text("neocoder_model: qwen\n")
    with pytest.raises(CrevalError, match=r"old.yaml: parameter 'neocoder_model' was retired") as e:
        load_params(f)
    assert e.value.fix.startswith("use model")
    with pytest.raises(CrevalError, match="novelty_model"):
        check_params({"novelty_model": "x"})


def test_models_under_test_are_model_then_models():
    assert DivergentConfig().tested == ("smollm2-135m",)
    assert DivergentConfig(model="a", models=("b", "a", "c")).tested == ("a", "b", "c")


def test_injected_values_are_written_into_the_parameters_cell_once():
    own = 'run_root = "runs/default"   # where runs go\nlimit = 2\nnli = "minilm-sick"  # backend'
    merged = merge_injected(own, '# Parameters\nrun_root = "runs/smoke"\nlimit = 1\n')
    assert merged.splitlines() == ['run_root = "runs/smoke"     # where runs go', "limit = 1",
                                   'nli = "minilm-sick"  # backend']


def test_cli_defaults_are_the_studies_defaults():
    from creval.cli import build_parser
    sub = next(a for a in build_parser()._actions if a.dest == "command").choices
    judge = {a.dest: a.default for a in sub["judge"]._actions}
    c = ConvergentConfig()
    expected = {"word_limit": c.convergent_judge_word_limit, "k": c.convergent_judge_k, "j": c.convergent_judge_j,
                "l": c.convergent_judge_l,
                "threshold": c.convergent_judge_threshold, "max_rounds": c.convergent_judge_max_rounds,
                "retries": c.convergent_judge_retries,
                "verdict_via": c.convergent_judge_verdict_via, "seed": c.seed}
    assert {k: judge[k] for k in expected} == expected and judge["method"] == c.convergent_bench_judge


def test_override_mistakes_name_the_override(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("limit: 3\n")
    with pytest.raises(CrevalError, match="the -p overrides: unknown parameter 'modle'"):
        load_params(f, ["modle=x"])
    with pytest.raises(CrevalError, match="override 'models=\\[a': the value is not valid YAML"):
        load_params(f, ["models=[a"])
    assert load_params(f, ["divergent_limit=4"]) == {"divergent_limit": 4}


def test_runs_on_sample_data_never_share_a_folder_with_runs_on_real_data(monkeypatch):
    from creval.core.paths import samples_dir
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.delenv("CREVAL_MACGYVER_DIR", raising=False)
    cfg = DivergentConfig(divergent_nli="minilm-cosine", divergent_domains=("macgyver",))
    on_sample = cfg.run_dir
    assert cfg.identity()["data"] == {"macgyver": "sample"}
    monkeypatch.setenv("CREVAL_MACGYVER_DIR", str(samples_dir() / "macgyver"))    # given as a dataset: real
    assert cfg.run_dir != on_sample and cfg.run_dir.parent == on_sample.parent


def test_default_profile_and_chapter_parameters_are_in_sync_with_the_configs():
    from creval.book.sync import sync
    assert sync(write=False) == [], "run `creval sync-params` after changing a Config"


def test_no_config_redeclares_a_field_it_inherits():
    from creval.studies.registry import STUDIES
    redeclared = {}
    def fields(k) -> set[str]:                      # dataclass fields: a ClassVar (study, not_read...) is none
        return {f.name for f in dataclasses.fields(k)} if dataclasses.is_dataclass(k) else set()
    for s in STUDIES.values():
        for klass in s.config.__mro__:
            own = set(vars(klass).get("__annotations__", {})) & fields(klass)
            inherited = set().union(*(fields(base) for base in klass.__mro__[1:]))
            if own & inherited:
                redeclared[f"{klass.__module__}.{klass.__name__}"] = sorted(own & inherited)
    assert not redeclared, f"a field means one thing in every study: do not redeclare {redeclared}"
