"""Chapter 01 "The apparatus": one problem, n sampled next steps with their token log-probs, and the
run's accounting. Everything here goes through the same cached model calls as the later chapters."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from creval.domains import get_domain
from creval.domains.steps import step_messages
from creval.models.registry import load_model
from creval.core.runs import RunStore
from creval.studies.apparatus.config import ApparatusConfig
from creval.studies.config import run_id


def draw_next_steps(cfg: ApparatusConfig, domain: str = "macgyver") -> RunStore:
    """Sample ``apparatus_samples`` first steps for the first problem of ``domain`` (the same problem that
    chapter 02 solves first); records go to ``<run_root>/apparatus/<model>/<run id>``."""
    dom = get_domain(domain)
    problem = dom.load(limit=1, seed=cfg.data_seed)[0]
    m = load_model(cfg.model)
    n, max_tokens, temperature, top_p, seed = (cfg.apparatus_samples, cfg.apparatus_max_tokens, cfg.temperature,
                                               cfg.top_p, cfg.seed)
    params = {"model": cfg.model, "n": n, "max_tokens": max_tokens, "temperature": temperature, "top_p": top_p,
              "seed": seed, "data_seed": cfg.data_seed, "domain": domain}
    store = RunStore(cfg.run_path / "apparatus" / cfg.model / run_id(params),
                     {**params, "data_source": dom.last_source})
    store.note_model(m)
    store.seeds["sampling"] = seed
    samples = m.sample(step_messages(dom, problem, [], max_steps=5), n, temperature=temperature, top_p=top_p,
                       max_tokens=max_tokens, stop=("\n",), seed=seed)
    store.write("samples", [{"problem_id": problem.problem_id, "problem_text": problem.text, "sample_index": i,
                             "logprob_kind": m.logprob_kind, **s.to_dict()} for i, s in enumerate(samples)])
    store.finish()
    return store


def problem_text(store: RunStore) -> str:
    return store.read("samples")[0]["problem_text"]


def samples_table(store: RunStore) -> pd.DataFrame:
    df = store.frame("samples")
    return df[["sample_index", "text", "n_tokens", "mean_logprob", "finish_reason"]].sort_values(
        "mean_logprob", ascending=False)


def token_logprob_figure(store: RunStore) -> go.Figure:
    """Each sample's per-token log-probs (one line per sample); the dashed level is its mean."""
    fig = go.Figure()
    for r in store.read("samples"):
        fig.add_trace(go.Scatter(y=r["token_logprobs"], mode="lines+markers", name=f"sample {r['sample_index']}",
                                 hovertext=r["text"], marker={"size": 4}))
    fig.update_layout(title="Token log-probabilities of each sampled next step", xaxis_title="token position",
                      yaxis_title="log p(token | prefix)  (natural log, raw logits)", height=420)
    return fig


def manifest_table(store: RunStore) -> pd.DataFrame:
    """Calls made vs served from cache, tokens, cost and seconds, per call kind and model."""
    import json
    m = json.loads((store.root / "manifest.json").read_text())
    rows = [{"what": k, **v} for k, v in m["usage"]["by_kind_model"].items()]
    rows.append({"what": "total", **m["usage"]["total"]})
    return pd.DataFrame(rows)


def manifest_facts(store: RunStore) -> pd.DataFrame:
    import json
    m = json.loads((store.root / "manifest.json").read_text())
    facts = {"git commit": m["git_commit"], "creval": m["creval_version"], "seeds": m["seeds"],
             "models": {k: {kk: v[kk] for kk in ("backend", "model", "logprob_kind")} for k, v in m["models"].items()},
             "data source": m["params"].get("data_source"), **{f"package {k}": v for k, v in m["packages"].items()}}
    return pd.DataFrame({"field": list(facts), "value": [str(v) for v in facts.values()]})
