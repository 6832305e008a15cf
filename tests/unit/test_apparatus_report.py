"""Chapter 01's sentences from fixture records: the samples' numbers and the closing list."""
import json

from creval.studies.apparatus import report
from creval.studies.apparatus.config import ApparatusConfig
from creval.studies.contract import Records


def _records(tmp_path, samples, usage):
    (tmp_path / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in samples))
    models = {"smollm2-135m": {"backend": "llamacpp", "model": "SmolLM2-135M-Instruct"},
              "gpt-4o": {"backend": "openai", "model": "gpt-4o"}}
    (tmp_path / "manifest.json").write_text(json.dumps({"usage": {"total": usage, "by_kind_model": {}},
                                                        "models": models}))
    return Records(tmp_path, ApparatusConfig())


def _sample(i, text, lps, mean=None):
    return {"sample_index": i, "text": text, "token_logprobs": lps, "n_tokens": len(lps), "finish_reason": "stop",
            "mean_logprob": sum(lps) / len(lps) if mean is None else mean, "logprob_kind": "raw",
            "problem_text": "p"}


def test_sample_values_and_what_this_shows(tmp_path):
    recs = _records(tmp_path, [_sample(0, "a", [-1.0, -2.0]), _sample(1, " a ", [-0.5]), _sample(2, "b", [-3.0])],
                    {"calls_made": 3, "cache_hits": 1})
    v = report.sample_values(recs)
    assert (v["samples"], v["distinct"], v["lo"], v["hi"], v["max_gap"]) == (3, 2, -3.0, -0.5, 0.0)
    assert "3 samples from `smollm2-135m`, 2 distinct texts" in report.samples_sentence(recs)
    md = report.what_this_shows(recs).split("\n")
    # an identity and a count are checks of the apparatus, not claims of the paper
    assert md[0].startswith("- **checked**: Check: the length-normalised") and md[1].startswith("- **checked**")
    assert md[-1].startswith("These verdicts rest on local models (`smollm2-135m` (SmolLM2-135M-Instruct)):")
    assert "made (3)" in md[2] and "cache (1)" in md[2]


def test_a_stored_mean_that_is_not_the_token_mean_is_reported(tmp_path):
    recs = _records(tmp_path, [_sample(0, "a", [-1.0, -2.0], mean=-1.0)], {"calls_made": 1, "cache_hits": 0})
    md = report.what_this_shows(recs).split("\n")
    assert md[0].startswith("- **check failed**") and "5.0e-01" in md[0]
    assert md[1].startswith("- **not testable here (fewer than two samples)**")     # one sample cannot differ
