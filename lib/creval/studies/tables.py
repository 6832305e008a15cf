"""What every study's report shares: a per-process memo of computed results, table captions, and the run
folder a report saves its tables in (``<run_root>/<study>/<run id of the config>``)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pandas as pd

from creval.core.runs import RunStore
from creval.studies.config import Config, run_id

MEMO: dict = {}


def memo(cfg: Config, key: str, fn: Callable):
    """``fn()`` computed once per (config, key) in this process."""
    if (cfg, key) not in MEMO:
        MEMO[cfg, key] = fn()
    return MEMO[cfg, key]


def captioned(df: pd.DataFrame, caption: str) -> pd.DataFrame:
    df.attrs["caption"] = caption
    return df


def study_dir(cfg: Config, study: str) -> Path:
    return cfg.run_path / study / run_id(cfg.to_params())


def save_table(cfg: Config, study: str, name: str, df: pd.DataFrame) -> None:
    RunStore(study_dir(cfg, study), cfg.to_params()).write(name, json.loads(df.to_json(orient="records")))
