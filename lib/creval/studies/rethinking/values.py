"""What the rethinking study hands the comparison: how surprised each model is by the shared texts."""
from __future__ import annotations

from creval.studies.values import value_row


def values(recs, models, judge: str = "") -> list[dict]:
    """How surprised each model is by the shared texts of each set, in bits per byte (the texts' log-likelihood
    over their UTF-8 bytes): unlike perplexity per token it compares models with different tokenizers, and a
    one-word text cannot dominate the mean (its per-text perplexity can run to 10^5)."""
    p = recs["perplexity"]
    return [value_row(x["model"], "rethinking", f"bits per byte ({x['set']} texts)", x["id"], x["bpb"])
            for x in (p[p["model"].isin(models)].to_dict("records") if len(p) else [])]
