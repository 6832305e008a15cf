"""Chapter 01 "The apparatus", pure: the records of ``STUDY.records(cfg)`` in (one
problem, n sampled next steps with their token log-probs, the run's accounting), tables and figures out."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from creval.measures.stats import numbers as num
from creval.studies.claims import TESTABLE, claims_md
from creval.studies.contract import Records
from creval.studies.tables import captioned, guard_module, public_text, readable


def problem_text(recs: Records) -> str:
    """The problem the samples continue, as given to the model."""
    return recs.written("samples", "problem_text")["problem_text"].iloc[0]


def samples_table(recs: Records) -> pd.DataFrame:
    """The sampled first steps, most likely (highest mean token log-prob) first."""
    df = recs.written("samples")
    return captioned(df[["sample_index", "text", "n_tokens", "mean_logprob", "finish_reason"]].sort_values(
        "mean_logprob", ascending=False), "Sampled first steps, most likely first")


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
    m = recs.manifest_with("usage")
    rows = [{"what": k, **v} for k, v in m["usage"]["by_kind_model"].items()]
    rows.append({"what": "total", **m["usage"]["total"]})
    return captioned(pd.DataFrame(rows), "Calls made vs served from cache, tokens and cost")


def manifest_facts(recs: Records) -> pd.DataFrame:
    """What the run was made with: commit, version, seeds, models (with their log-prob definition), data
    source and package versions."""
    m = recs.manifest_with("git_commit", "creval_version", "seeds", "models", "params", "packages")
    facts = {"git commit": m["git_commit"], "creval": m["creval_version"], "seeds": m["seeds"],
             "models": {k: {kk: v[kk] for kk in ("backend", "model", "logprob_kind")} for k, v in m["models"].items()},
             "data source": m["params"].get("data_source"), **{f"package {k}": v for k, v in m["packages"].items()}}
    return captioned(pd.DataFrame({"field": list(facts), "value": [public_text(readable(v)) for v in facts.values()]}),
                     "The run's manifest: what it was made with")


def sample_values(recs: Records) -> dict:
    """The numbers the chapter cites: samples, distinct texts, the range of mean log-probs, the largest gap
    between a stored mean log-prob and the mean of its token log-probs, the log-prob definition, the calls."""
    rows = recs.rows("samples")
    gaps = [abs(r["mean_logprob"] - float(np.mean(r["token_logprobs"]))) for r in rows if r["token_logprobs"]]
    means = [r["mean_logprob"] for r in rows]
    total = recs.manifest.get("usage", {}).get("total", {})
    return {"samples": len(rows), "distinct": len({r["text"].strip() for r in rows}),
            "lo": min(means, default=float("nan")), "hi": max(means, default=float("nan")),
            "max_gap": max(gaps, default=float("nan")), "with_tokens": len(gaps),
            "kind": ", ".join(sorted({r["logprob_kind"] for r in rows})),
            "made": int(total.get("calls_made", 0)), "cached": int(total.get("cache_hits", 0)),
            "model": recs.cfg.model if recs.cfg else "?"}


def samples_sentence(recs: Records) -> str:
    """One sentence on the samples above, from the records."""
    v = sample_values(recs)
    return (f"This build drew {v['samples']} samples from `{v['model']}`, {v['distinct']} distinct texts; their mean "
            f"token log-probs run from {num.fmt_number(v['lo'])} to {num.fmt_number(v['hi'])} (log-prob definition: "
            f"`{v['kind']}`).")


CHECKED, CHECK_FAILED = "checked", "check failed"    # an identity or a count: a check of the apparatus, no claim


def what_this_shows(recs: Records) -> str:
    """The closing list: what the apparatus was checked to do on this build (an identity and a count: *checked*
    or *check failed*, never a paper's claim "supported"), and the one claim it cannot test here."""
    v = sample_values(recs)
    known = bool(v["with_tokens"]) and bool(np.isfinite(v["max_gap"]))
    gap = (f"largest difference {v['max_gap']:.1e}" if known else
           "no sample has finite token log-probs and a stored mean to compare")
    same = (CHECKED if v["max_gap"] <= 1e-9 else CHECK_FAILED) if known else f"{TESTABLE} (nothing to compare)"
    differ = (CHECKED if v["distinct"] > 1 else CHECK_FAILED) if v["samples"] >= 2 else \
        f"{TESTABLE} (fewer than two samples)"
    rows = [(same, "Check: the length-normalised log-likelihood (the paper's appendix C) is the mean of the token "
             "log-probs.", f"Here every sample's stored `mean_logprob` is compared with the mean of its "
             f"{v['with_tokens']} token lists ({gap})."),
            (differ, "Check: sampling at the paper's temperature and nucleus gives different "
             "next steps to cluster.", f"Here {v['distinct']} distinct texts among {v['samples']} samples."),
            (TESTABLE, "Whether these log-probs behave like those of the paper's models (GPT-4o, Llama).",
             f"This build samples `{v['model']}`; the manifest above says which calls were made "
             f"({v['made']}) and which were served from the cache ({v['cached']}).")]
    return claims_md(rows, recs)


guard_module(globals())
