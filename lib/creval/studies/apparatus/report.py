"""Chapter 01 "The apparatus", pure: the records of :func:`creval.studies.apparatus.run.records` in (one
problem, n sampled next steps with their token log-probs, the run's accounting), tables and figures out."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from creval.studies.contract import Records


def problem_text(recs: Records) -> str:
    return recs.rows("samples")[0]["problem_text"]


def samples_table(recs: Records) -> pd.DataFrame:
    df = recs.samples
    return df[["sample_index", "text", "n_tokens", "mean_logprob", "finish_reason"]].sort_values(
        "mean_logprob", ascending=False)


def token_logprob_figure(recs: Records) -> go.Figure:
    """Each sample's per-token log-probs (one line per sample); the dashed level is its mean."""
    fig = go.Figure()
    for r in recs.rows("samples"):
        fig.add_trace(go.Scatter(y=r["token_logprobs"], mode="lines+markers", name=f"sample {r['sample_index']}",
                                 hovertext=r["text"], marker={"size": 4}))
    fig.update_layout(title="Token log-probabilities of each sampled next step", xaxis_title="token position",
                      yaxis_title="log p(token | prefix)  (natural log, raw logits)", height=420)
    return fig


def manifest_table(recs: Records) -> pd.DataFrame:
    """Calls made vs served from cache, tokens, cost and seconds, per call kind and model."""
    m = recs.manifest
    rows = [{"what": k, **v} for k, v in m["usage"]["by_kind_model"].items()]
    rows.append({"what": "total", **m["usage"]["total"]})
    return pd.DataFrame(rows)


def manifest_facts(recs: Records) -> pd.DataFrame:
    m = recs.manifest
    facts = {"git commit": m["git_commit"], "creval": m["creval_version"], "seeds": m["seeds"],
             "models": {k: {kk: v[kk] for kk in ("backend", "model", "logprob_kind")} for k, v in m["models"].items()},
             "data source": m["params"].get("data_source"), **{f"package {k}": v for k, v in m["packages"].items()}}
    return pd.DataFrame({"field": list(facts), "value": [str(v) for v in facts.values()]})
