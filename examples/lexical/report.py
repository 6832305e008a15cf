"""Pure: the lexical study's records in, a table out."""
from __future__ import annotations

import pandas as pd


def by_model(recs) -> pd.DataFrame:
    """Mean distinct-2 of each model's answers (one row per model)."""
    df = recs.answers.groupby("model", as_index=False).agg(distinct_2=("distinct_2", "mean"),
                                                           problems=("problem_id", "nunique"))
    df.attrs["caption"] = "Distinct-2 of each model's first-step answers, averaged over problems"
    return df
