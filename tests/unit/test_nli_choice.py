"""The entailment backend is decided once (DivergentConfig.nli_runs / nli_judge / nli_backend) and an ``llm:`` NLI
name parsed once (measures.nli.llm.llm_model); every study that reads the divergent parameters asks them."""
from creval.measures.nli import backends
from creval.measures.nli.llm import llm_model, llm_nli
from creval.studies.divergent.config import DivergentConfig
from creval.studies.divergent.estimate import estimate
from creval.studies.validation.config import ValidationConfig


def test_an_llm_nli_name_is_parsed_in_one_place():
    assert llm_model("llm:gpt-4o") == "gpt-4o" and llm_model(" llm:smollm2-135m ") == "smollm2-135m"
    assert [llm_model(n) for n in ("minilm-sick", "minilm-cosine", "deberta", "hf:some/id", "llm:")] == [""] * 5
    assert llm_nli("gpt-4o") == "llm:gpt-4o" and llm_model(llm_nli("m")) == "m"


def test_every_study_reading_the_divergent_parameters_gets_the_same_choice(monkeypatch):
    monkeypatch.setattr(backends, "_why_no_sick", lambda: "no SICK here")
    monkeypatch.setattr(backends, "LOADED", type(backends.LOADED)())   # an earlier test may have loaded minilm-sick
    cfg = DivergentConfig.from_params({"divergent_nli": "minilm-sick"})
    assert cfg.nli_runs() == "minilm-cosine" == cfg.resolved()["nli"] and cfg.nli_judge() == ""
    val = ValidationConfig.from_params({"divergent_nli": "minilm-sick"})
    assert val.resolved()["nli"] == val.divergent().nli_runs() == "minilm-cosine"
    judged = DivergentConfig.from_params({"divergent_nli": "llm:smollm2-135m"})
    assert judged.nli_runs() == "llm:smollm2-135m" and judged.nli_judge() == "smollm2-135m"


def test_the_estimate_prices_an_llm_entailment_judge_on_its_model():
    cfg = DivergentConfig.from_params({"divergent_nli": "llm:smollm2-135m", "model": "smollm2-135m"})
    parts = [p for ph in estimate(cfg).phases for p in ph.parts]
    assert any(p.model == "smollm2-135m" and "entailment of sample pairs" in p.what for p in parts)
