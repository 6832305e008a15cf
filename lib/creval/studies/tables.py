"""What every study's report shares: table captions."""
from __future__ import annotations

import pandas as pd


def captioned(df: pd.DataFrame, caption: str) -> pd.DataFrame:
    """``df`` with a caption the book shows above it."""
    df.attrs["caption"] = caption
    return df
