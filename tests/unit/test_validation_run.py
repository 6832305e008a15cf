"""The validation run's table helpers and its per-problem human reference, with a fake model."""
from types import SimpleNamespace

import pytest

from creval.core.runs import RunStore
from creval.studies.validation import run
from creval.studies.validation.config import ValidationConfig


def test_once_writes_a_table_only_the_first_time(tmp_path):
    store, calls = RunStore(tmp_path), []

    def build():
        calls.append(1)
        return [{"x": len(calls)}]
    run._once(store, "t", build)
    run._once(store, "t", build)
    assert calls == [1] and store.read("t") == [{"x": 1}]


class FakeModel:
    def __init__(self, texts):
        self.texts, self.asked = texts, []

    def sample(self, msgs, n, **kw):
        self.asked.append((msgs, n, kw))
        return [SimpleNamespace(text=f" {t} ") for t in self.texts[:n]]


def test_human_reference_rows_sample_as_many_as_the_crowd(monkeypatch):
    from creval.measures import diversity as D
    monkeypatch.setattr(D, "avg_cosine_similarity", lambda texts, *a, **k: 0.0)   # no embedder in a unit test
    cfg = ValidationConfig.from_params(dict(n_samples=2, human_ref_max_tokens=7, temperature=0.5, top_p=0.8, seed=3))
    assert cfg.upstream_params == {"divergent_n_samples": 2, "divergent_temperature": 0.5,
                                   "divergent_top_p": 0.8}    # divergent's, by composition
    m = FakeModel(["tie the rope", "tie the rope", "cut the rope"])
    rows = run.human_reference_rows(cfg, {"problem_id": "p1", "problem": "Cross the river.",
                                          "solutions": ["swim across", "build a raft", "use the bridge"]}, {"m": m})
    assert [r["solver"] for r in rows] == ["humans (crowd)", "m"] and {r["problem_id"] for r in rows} == {"p1"}
    (msgs, n, kw), = m.asked
    assert n == 2 and kw == {"temperature": 0.5, "top_p": 0.8, "max_tokens": 7, "seed": 3}
    assert msgs[0]["content"].startswith("Cross the river.\n")
    assert rows[0]["distinct_1"] == pytest.approx(5 / 5) and rows[0]["n"] == 2      # swim across / build a raft
    assert rows[1]["distinct_1"] == pytest.approx(3 / 6)                           # the same sample twice, stripped


def test_no_cambridge_table_when_no_items():
    assert run.cambridge(ValidationConfig(aut_cambridge_items=0)).empty


def test_identity_ignores_the_divergent_sweep():
    base = ValidationConfig()
    swept = ValidationConfig.from_params(dict(temperatures=[0.7], sweep_limit=5, nli_eval_pairs=3, n_boot=10))
    assert swept.divergent().divergent_sweep_limit == 5 and swept.run_id == base.run_id
    assert ValidationConfig.from_params({"divergent_limit": 7}).run_id != base.run_id
    assert ValidationConfig(judge_model="other").run_id != base.run_id
    assert set(base.identity()["human_data"]) == {"aut", "macgyver"}


def test_divergent_by_composition_keeps_the_flat_identity():
    """The divergent parameters are no fields of ValidationConfig; its run id still hashes them by name."""
    from creval.studies.divergent.config import DivergentConfig
    cfg = ValidationConfig.from_params({"divergent_limit": 7, "divergent_domains": ["hypogen"], "aut_items": 3})
    assert "limit" not in ValidationConfig.keys() and cfg.divergent() == DivergentConfig(divergent_limit=7,
                                                                                         divergent_domains=("hypogen",))
    ident = cfg.identity()
    assert ident["limit"] == 7 and ident["domains"] == ["hypogen"] and ident["aut_items"] == 3
    assert "upstream_params" not in ident and "sweep_limit" not in ident and cfg.divergent().divergent_limit == 7


def test_a_divergent_parameter_is_no_attribute_of_the_reading_configs():
    """Issue 44: the legacy pass-through is gone; a divergent name on a validation or convergent Config raises."""
    from creval.studies.convergent.config import ConvergentConfig
    for cfg in (ValidationConfig.from_params({"divergent_limit": 7}),
                ConvergentConfig.from_params({"divergent_limit": 7})):
        assert cfg.divergent().divergent_limit == 7 and not hasattr(cfg, "limit") and not hasattr(cfg, "nowhere")
        with pytest.raises(AttributeError):
            cfg.divergent_n_samples


def test_human_full_measures_every_labelled_item_and_flags_the_draw(tmp_path, monkeypatch):
    import pandas as pd

    from creval.core.errors import CrevalError
    from creval.datasets import aut, macgyver
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path))
    ocsai = pd.DataFrame({"item_id": [f"o{i}" for i in range(6)], "source": "ocsai1",
                          "prompt": ["brick"] * 3 + ["box"] * 3, "score": [1, 2, 3, 4, 5, 1],
                          "response": ["build a wall", "a doorstop", "grind it into red paint",
                                       "a cat bed", "a tiny theatre stage", "store things"]})
    mg = pd.DataFrame({"problem_id": [7, 8, 9, 10], "problem": ["Open a jar without tools."] * 4,
                       "solution": ["Use a rubber glove for grip.", "Tap the lid with a spoon.",
                                    "Run hot water over the lid.", "Use a belt as a strap wrench."],
                       "unconventional": [True, False, False, True], "source": "macgyver"})

    def load_ocsai(n=None, objects=None, seed=0):
        return ocsai if n is None else ocsai.iloc[[0, 3]]

    def load_unconventional(n_per_class=None, seed=0):
        return mg if n_per_class is None else mg.iloc[[0, 1]]
    monkeypatch.setattr(aut, "load_ocsai", load_ocsai)

    def no_cambridge(n=None, seed=0):
        raise CrevalError("no Cambridge data", "stage it")
    monkeypatch.setattr(aut, "load_cambridge", no_cambridge)
    monkeypatch.setattr(macgyver, "load_unconventional", load_unconventional)
    df = run.human_full(ValidationConfig(validation_human_full=True))
    assert list(df["dataset"]) == ["ocsai1 main2_test"] * 6 + ["macgyver"] * 4       # no Cambridge: skipped
    assert df["in_draw"].tolist() == [True, False, False, True, False, False, True, True, False, False]
    assert df["target"].tolist()[6:] == [1.0, 0.0, 0.0, 1.0] and df["stratum"].tolist()[:4] == ["brick"] * 3 + ["box"]
    o = df[df["dataset"] == "ocsai1 main2_test"]
    assert o["semdis"].between(0, 2).all() and o["cosine_to_others"].between(-1, 1).all()
    assert o["distinct_1"].tolist()[0] == pytest.approx(1.0)                            # "build a wall"
    assert "bleu_to_others" not in df and df[df["dataset"] == "macgyver"]["cosine_to_others"].isna().all()
    assert run.human_full(ValidationConfig(validation_human_full=False)).empty
