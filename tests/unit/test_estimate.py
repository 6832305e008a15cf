"""`creval estimate`: the paper profile's unit counts, cost from the specs' prices, wall time against the
in-flight limit, and the estimate against what a real run (stand-in server as model and judge) made."""
import json
import math

import pytest
import yaml

from creval.book.params import effective_params, load_params
from creval.cli import main
from creval.commands.estimate import study_rows
from creval.core.ledger import LEDGER
from creval.studies.estimate import ZERO, Phase, Range, cost, estimate, phase_wall, problems, speed, wall
from creval.studies.estimate.sizes import macgyver_pairs
from creval.studies.registry import STUDIES, get_study

LLM_KINDS = ("chat", "sample", "choice", "loglikelihood")


def paper(*overrides) -> dict:
    return effective_params(load_params("params/paper.yaml", list(overrides)))


def total(est, key: str) -> Range:
    return sum((getattr(p, key) for p in est.parts), ZERO)


def test_paper_profile_builds_every_study_and_counts_its_units():
    params = paper()
    ests = {name: estimate(s.make_config(params, where="params/paper.yaml")) for name, s in STUDIES.items()}
    cfg = get_study("divergent").make_config(params)
    per_model = sum(len(problems(d, 300, 42)) for d in cfg.divergent_domains)
    sweep_k = len(problems(cfg.divergent_sweep_domain, cfg.divergent_sweep_limit,
                           cfg.data_seed))    # fewer where only a sample is here
    swept = sweep_k * len([t for t in cfg.divergent_temperatures if t != cfg.divergent_temperature])  # 1.0: main run
    assert ests["divergent"].phases[0].units == per_model + swept
    two = estimate(get_study("divergent").make_config(paper("models=[gpt-4o]")))
    assert two.phases[0].units == 2 * per_model + swept                     # models x domains x problems (+ sweep)
    labelled = len(macgyver_pairs(50, 42))                 # the 50 human-labelled pairs asked (a sample holds fewer)
    assert ests["convergent"].phases[-1].units == labelled > 0
    aut = ests["aut"]
    assert aut.phases[0].units == 5 * 3                                     # five objects x one generator x 3 levels
    assert total(aut, "calls").lo >= 5 * (3 + 4) + 5 * 3 * (1 + 5)        # chains, and every list of every object
    assert ests["reportcard"].units == 0                       # it reads the others' records: no call of its own
    assert ests["compare"].units > 0                           # the pairwise judge over the released outputs
    for name, e in ests.items():         # an estimate of no call says why
        where = f"lib/{get_study(name).package.replace('.', '/')}/estimate.py"
        assert e.parts or (e.units == 0 and e.notes), f"{name}: {where} prices no call and says not why"


def _spec(tmp_path, name: str, price_in: float, price_out: float) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "backend": "openai", "model": name, "base_url": "http://127.0.0.1:9/v1",
                                    "price_in": price_in, "price_out": price_out, "concurrency": 16,
                                    "extra": {"latency_s": 1.0, "tokens_per_s": 50}}))
    return str(path)


def test_cost_scales_with_the_specs_prices(tmp_path):
    cheap, dear = _spec(tmp_path, "cheap", 0.15, 0.60), _spec(tmp_path, "dear", 1.5, 6.0)
    ests = [estimate(get_study("convergent").make_config(paper(f"model={m}", f"judge_model={m}")))
            for m in (cheap, dear)]
    costs = [sum((cost(p) for p in e.parts), ZERO) for e in ests]
    prompt, completion = total(ests[0], "prompt"), total(ests[0], "completion")
    assert costs[0].lo == pytest.approx((prompt.lo * 0.15 + completion.lo * 0.60) / 1e6)
    assert costs[1].hi == pytest.approx(10 * costs[0].hi) and costs[0].lo < costs[0].hi


def test_wall_time_falls_as_in_flight_grows_until_the_units_run_out(tmp_path):
    spec = _spec(tmp_path, "server", 0.0, 0.0)
    est = estimate(get_study("aut").make_config(paper(f"model={spec}", f"judge_model={spec}")))
    walls = [wall(est, {spec: speed(spec, in_flight=k)}) for k in (1, 4, 16, 64, 4096, 10 ** 6)]
    assert all(a.hi > b.hi for a, b in zip(walls[:4], walls[1:4]))
    assert walls[-2] == walls[-1]                                          # past units x breadth: no faster
    ph = Phase("chain", 2, Range(10, 10), est.phases[0].parts)             # chains are sequential: wall >= depth
    assert phase_wall(ph, {spec: speed(spec, in_flight=10 ** 6)}).lo >= 10 * 1.0
    assert speed(spec).source == "spec extra" and speed(spec, latency=2.0).source == "flags"


def test_the_command_prints_a_total_and_json(capsys):
    assert main(["estimate", "aut", "--params", "params/paper.yaml", "-p", "model=gpt-4o-mini",
                 "-p", "judge_model=gpt-4o-mini", "--latency", "1", "--in-flight", "64"]) == 0
    out = capsys.readouterr().out
    assert "aut:" in out and "total:" in out and "$" in out and "(flags)" in out
    assert main(["estimate", "aut", "--json", "-p", "model=gpt-4o-mini", "-p", "judge_model=gpt-4o-mini"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["studies"][0]["study"] == "aut" and got["total"]["calls"]["min"] <= got["total"]["calls"]["max"]
    assert got["total"]["wall_s"] is None                                   # gpt-4o-mini's spec states no speed


def _measured(t, model: str) -> dict:
    by = t.summary()["by_kind_model"]
    rows = [v for k, v in by.items() if k.split(":", 1)[0] in LLM_KINDS and k.split(":", 1)[1] == model]
    return {"calls": sum(v["calls_made"] for v in rows), "prompt": sum(v["made_input_tokens"] for v in rows),
            "completion": sum(v["made_output_tokens"] for v in rows)}


def _run(tmp_path, study: str, params: dict):
    from creval.models.standin import StandIn
    with StandIn(latency=0.02, capacity=64) as s:
        (tmp_path / "standin.yaml").write_text(s.spec_yaml("standin", 64))
        spec = str(tmp_path / "standin.yaml")
        cfg = get_study(study).make_config({**params, "model": spec, "judge_model": spec,
                                            "run_root": str(tmp_path / "runs")})
        est = estimate(cfg)                                                 # before any call
        with LEDGER.collect() as t:
            get_study(study).records(cfg)
        return est, _measured(t, "standin"), s.stats["requests"]


def _within(got: float, r: Range, slack: float = 0.25) -> bool:
    return (1 - slack) * r.lo <= got <= (1 + slack) * r.hi


@pytest.mark.integration
def test_estimate_brackets_a_real_divergent_run(tmp_path, fresh_cache):
    est, got, requests = _run(tmp_path, "divergent", dict(
        domains=("macgyver", "hypogen"), limit=3, n_samples=4, max_steps=3, max_step_tokens=24, temperatures=(0.5,),
        sweep_limit=1, nli_eval_pairs=4, nli="minilm-cosine"))
    calls = total(est, "calls")
    assert calls.lo <= got["calls"] <= calls.hi and requests == got["calls"], (calls, got)
    for key in ("prompt", "completion"):
        assert _within(got[key], total(est, key)), (key, total(est, key), got[key])


@pytest.mark.integration
def test_estimate_brackets_a_real_aut_run(tmp_path, fresh_cache):
    """Calls and completion tokens; the stand-in counts a prompt's tokens on its JSON text (about 1.3 times the
    estimate's characters / 4, a real tokenizer's scale), so prompt tokens are compared on that scale."""
    est, got, _ = _run(tmp_path, "aut", dict(
        aut_things=("fork", "paperclip"), aut_per_level=2, aut_forceful_turns=1, aut_retries=1, aut_items=4,
        cambridge_items=4, aut_objects=1, aut_human_list=4, aut_baselines_full=False))
    calls = total(est, "calls")
    assert calls.lo <= got["calls"] <= calls.hi, (calls, got)
    assert _within(got["completion"], total(est, "completion")), got
    assert _within(got["prompt"] / 1.3, total(est, "prompt")), (total(est, "prompt"), got)
    assert not math.isnan(got["prompt"])


def test_local_work_is_counted_at_this_machines_rates_and_no_server_removes_it(tmp_path, monkeypatch):
    """Entailment pairs, embeddings and sandboxed programs run here whatever the server: the wall time of a study
    against an infinitely fast server is at least its local work at LOCAL_RATES (issue 32, item 7). SICK is taken
    as at hand (the estimate prices the cosine fallback where it is not, as a clean clone without ../shared has)."""
    from creval.measures.nli import backends
    from creval.models import heavy
    from creval.studies.estimate import LOCAL_RATES, local_seconds
    monkeypatch.setattr(backends, "LOADED", heavy.Loaded())
    monkeypatch.setattr(backends, "_why_no_sick", lambda: None)
    spec = _spec(tmp_path, "instant", 0.0, 0.0)
    fast = {spec: speed(spec, latency=1e-9, tokens_per_s=1e12, in_flight=10 ** 6)}
    cfg = get_study("divergent").make_config(paper(f"model={spec}", f"judge_model={spec}", "divergent_nli=minilm-sick"))
    est = estimate(cfg)
    solve = est.phases[0]
    pairs = [w for w in solve.local if w.kind == "entailment"]
    steps = Range(solve.units, solve.units * cfg.divergent_max_steps)
    n = cfg.divergent_n_samples
    assert pairs and pairs[0].items == steps * Range(2 * (n - 1), n * (n - 1))
    floor = sum(local_seconds(w, "lo") for w in est.local)
    assert floor == pytest.approx(sum(w.items.lo / LOCAL_RATES[w.kind][0] for w in est.local)) and floor > 0
    assert wall(est, fast).lo >= floor
    cosine = estimate(get_study("divergent").make_config(paper(f"model={spec}", "divergent_nli=minilm-cosine")))
    assert {w.kind for w in cosine.phases[0].local} == {"embedding"}
    nc = estimate(get_study("neocoder").make_config(paper(f"model={spec}", f"judge_model={spec}")))
    assert sum(w.items.lo for w in nc.local if w.kind == "sandbox") > 0
    out = study_rows(est, fast)
    assert out["local"] and out["local"][0]["seconds"].lo > 0


def test_the_estimate_prices_the_entailment_backend_that_really_runs(monkeypatch):
    # on a machine without SICK, minilm-sick falls back to cosine: the estimate counts embeddings, not pair scores
    from creval.measures.nli import backends
    from creval.models import heavy
    cfg = get_study("divergent").make_config(paper("divergent_nli=minilm-sick"))
    monkeypatch.setattr(backends, "LOADED", heavy.Loaded())   # an earlier test in this process may have loaded it
    monkeypatch.setattr(backends, "_why_no_sick", lambda: "SICK is not there")
    kinds = {w.kind for p in estimate(cfg).phases if p.name == "solve" for w in p.local}
    assert kinds == {"embedding"} and cfg.nli_runs() == "minilm-cosine"
    assert any("falls back" in n for n in estimate(cfg).notes)
    monkeypatch.setattr(backends, "_why_no_sick", lambda: None)
    assert {w.kind for p in estimate(cfg).phases if p.name == "solve" for w in p.local} == {"entailment"}


def test_the_human_sets_estimate_counts_the_local_work_it_will_do(monkeypatch):
    # no model call, but tagging and embedding every text: never "0 s"; sized from the sample when that is all here
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    cfg = get_study("humansets").make_config(paper())
    est = estimate(cfg)
    kinds = {w.kind for w in est.local}
    assert {"tagging", "embedding", "creativity-index"} <= kinds and all(w.items.lo > 0 for w in est.local)
    assert any("bundled sample" in n for n in est.notes)
    lean = estimate(get_study("humansets").make_config(paper("humansets_measures=[lexical]")))
    assert not lean.local
