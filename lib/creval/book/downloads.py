"""Every table of a study's run as files a reader downloads: CSV and Parquet per table, and a data dictionary
generated from the tables' record types (:mod:`creval.core.records`).

CSV holds one value per cell: a list or a mapping (a transcript, clusters, rounds) is written as its JSON text,
which ``json.loads`` reads back. Parquet keeps them as lists and structs; a column pyarrow cannot type (values
of mixed kinds) is written as JSON text there too, and the dictionary says which.
"""
from __future__ import annotations

import dataclasses
import inspect
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd

from creval.book.browse import declared_columns

COMMENT = re.compile(r"^\s+(\w+)\s*:[^#]*#\s*(.+)$")


def field_notes(kind: Any) -> dict[str, str]:
    """The comment written after each field of a record class (``name: str   # what it is``)."""
    try:
        source = inspect.getsource(kind)
    except (OSError, TypeError):
        return {}
    return {m.group(1): m.group(2).strip() for m in map(COMMENT.match, source.splitlines()) if m}


# What a column means when its record type writes no comment after the field: the names the studies share
# (CONTRIBUTING.md's vocabulary), then patterns of names (:func:`column_meaning`).
MEANINGS = {
    "model": "the model under test that produced the row", "models": "the models the row covers",
    "judge": "the judge (an LLM that rates text) whose verdict the row holds",
    "judge_model": "the LLM behind the judge", "problem_id": "the problem: <dataset>-<native id>",
    "pair_id": "one judged (problem, solution) pair: <problem_id>::<solver>[::<row>]",
    "item_id": "the item of the dataset the row is about", "id": "the row's identifier in its dataset",
    "story_id": "the story the row is about", "au_id": "the unit of annotation the row is about",
    "domain": "the dataset or task family (macgyver, hypogen, bookmia...)", "dataset": "the dataset the row comes from",
    "text": "the text the row measures", "texts": "the texts the row measures",
    "prompt": "the prompt sent to the model",
    "reply": "the model's reply as returned", "response": "the response the row measures",
    "solution": "the solution text", "solver": "who wrote the solution (a model or people)",
    "solution_model": "the model that wrote the solution", "problem": "the problem statement",
    "problem_text": "the problem statement as the model saw it", "criterion": "the criterion the judge rates",
    "temperature": "the sampling temperature", "top_p": "the nucleus-sampling threshold", "seed": "the sampling seed",
    "step_index": "which step of the solution (0 is the first)", "steps": "the solution's steps, in order",
    "samples": "the sampled next steps of this step", "sample_index": "which sample of the call (0 is the first)",
    "cluster_ids": "the semantic cluster of each sample (same number: same meaning)",
    "n_clusters": "how many semantic clusters the samples form",
    "semantic_entropy": "semantic entropy of the step's samples (nats)",
    "naive_entropy": "entropy of the samples' texts counted as strings (nats)",
    "discrete_entropy": "entropy of the cluster sizes alone, ignoring log-probs (nats)",
    "nli": "the entailment backend that clustered the samples", "verdict": "the judge's verdict",
    "label": "the people's label", "labels": "the people's labels", "human": "the people's rating or label",
    "score": "the score the row gives", "scores": "the scores the row gives", "value": "the measured value",
    "confidence": "the judge's confidence in its verdict", "p_yes": "the judge's probability of answering yes",
    "parsed_by": "how the judge's reply was parsed", "unparsed": "replies no parser could read",
    "kind": "what kind of row this is", "source": "where the row's data came from",
    "data_source": "where the data came from: env var, staged copy, download or bundled sample",
    "state": "the denial state: how many techniques are banned", "round": "the denial round (0: no ban)",
    "rounds": "the rounds of the denial thread", "technique": "the programming technique",
    "techniques": "the programming techniques detected", "code": "the program's source",
    "status": "the outcome of the run", "note": "a remark written by the run", "why": "the reason, in words",
    "reason": "the reason, in words", "transcript": "every turn of the exchange, in order",
    "turn": "which turn of the exchange", "calls": "model calls", "calls_made": "model calls made (not from the cache)",
    "calls_cached": "model calls served from the cache", "seconds": "wall time in seconds",
    "input_tokens": "tokens sent to the model", "output_tokens": "tokens the model wrote",
    "prompt_tokens": "tokens of the prompt", "token_logprobs": "the log-probability of each generated token",
    "logprob_kind": "raw: log-softmax of raw logits; server: what an endpoint reports",
    "finish_reason": "why generation stopped (stop, length...)", "backend": "what served the model",
    "run_id": "the run: a short hash of the study's identity fields", "run_dir": "the run's folder",
    "study": "the study the row belongs to", "measure": "the measure the row is about",
    "baseline": "the baseline the measure is compared with", "paper": "what the paper reports",
    "set": "which subset of the items", "group": "the group the row belongs to", "level": "the level of the item",
    "object": "the object whose uses are listed (alternative uses task)", "task": "the task the row measures",
    "distinct_1": "distinct-1: distinct unigrams over all unigrams", "distinct_2": "distinct-2: distinct bigrams over "
    "all bigrams", "self_bleu": "self-BLEU against the model's other answers (higher: more alike)",
    "cosine": "embedding cosine similarity", "semdis": "semantic distance from the prompt (1 - cosine)",
    "novelty": "the novelty of the answer", "ppl": "perplexity", "lo": "the low end of the 95% interval",
    "hi": "the high end of the 95% interval", "z": "the standardised score", "rate": "the share of the rows",
    "items": "the items the row covers", "pairs": "the pairs the row covers", "extra": "other fields the run kept",
    "provenance": "what produced the verdict: judge, prompt hash, settings", "retries": "how many times it was asked "
    "again", "attempts": "how many attempts were made", "scale": "the rating scale", "ran": "whether it was run",
}
PATTERNS = [
    (re.compile(r"^n$"), lambda m: "how many rows or items the value counts"),
    (re.compile(r"^n[_ ](.+)$"), lambda m: f"how many {m.group(1).replace('_', ' ')}"),
    (re.compile(r"^(mean|min|max|median|sd)_(.+)$"), lambda m: f"the {m.group(1)} of {column_meaning(m.group(2))}"),
    (re.compile(r"^(.+?)[_ ](lo|l)$"), lambda m: f"the low end of the 95% interval of {m.group(1).replace('_', ' ')}"),
    (re.compile(r"^(.+?)[_ ]hi$"), lambda m: f"the high end of the 95% interval of {m.group(1).replace('_', ' ')}"),
    (re.compile(r"^(is|has)_(.+)$"), lambda m: f"whether it {m.group(1)} {m.group(2).replace('_', ' ')}"),
    (re.compile(r"^p_(.+)$"), lambda m: f"the probability of {m.group(1).replace('_', ' ')}"),
    (re.compile(r"^(.+)_(id|idx|index)$"), lambda m: f"which {m.group(1).replace('_', ' ')} (identifier)"),
    (re.compile(r"^(.+)[_ ]tokens$"), lambda m: f"tokens of the {m.group(1).replace('_', ' ')}"),
    (re.compile(r"^(.+)_(repo|strict)$"), lambda m: f"{column_meaning(m.group(1))}, under the {m.group(2)} judge"),
]


def column_meaning(column: str) -> str:
    """What a column means when its record type says nothing: the shared vocabulary (:data:`MEANINGS`), then
    the shape of its name (``n_items``, ``mean_x``, ``x_lo``...); "" when neither knows it."""
    if column in MEANINGS:
        return MEANINGS[column]
    for pattern, say in PATTERNS:
        m = pattern.match(column)
        if m:
            return say(m)
    return ""


def described(column: str, kind: Any) -> str:
    """The meaning of ``column`` of record type ``kind`` when no comment follows its field: from
    :func:`column_meaning`, else its words and the first line of the record's docstring."""
    found = column_meaning(column)
    if found:
        return found
    doc = (kind.__dict__.get("__doc__") or "" if isinstance(kind, type) else "").strip().split("\n")[0].rstrip(".")
    if doc.startswith(f"{getattr(kind, '__name__', '')}("):       # the signature a dataclass writes, not prose
        doc = ""
    words = column.replace("_", " ")
    return f"{words}, as the run wrote it ({getattr(kind, '__name__', 'record')}: {doc})" if doc else (
        f"{words}, as the run wrote it")


def cell(text: Any) -> str:
    """A value as one cell of a Markdown table: ``|`` escaped, line breaks as spaces."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def type_name(t: Any) -> str:
    return t if isinstance(t, str) else getattr(t, "__name__", None) or str(t).replace("typing.", "")


def dictionary_rows(table: str, kind: Any) -> list[dict]:
    """One row per column the record type of ``table`` declares: its name, type, whether every row has it,
    and its meaning (the field's comment, else :func:`described`)."""
    if not dataclasses.is_dataclass(kind):
        return [{"table": table, "column": "(any)", "type": "untyped", "presence": "as written",
                 "meaning": "this table has no record type: its columns are what the run wrote"}]
    notes, out = field_notes(kind), []
    for f in dataclasses.fields(kind):
        if "spread" in f.metadata:
            column, presence = f"{f.metadata['spread']}<key>", "one column per key"
        else:
            column = f.metadata.get("column", f.name)
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            presence = "optional" if f.metadata.get("optional") else "every row" if required else "every row (default)"
        out.append({"table": table, "column": column, "type": type_name(f.type), "presence": presence,
                    "meaning": notes.get(f.name) or described(column, kind)})
    return out


def dictionary_markdown(rows: list[dict], record_names: dict[str, str]) -> str:
    """The data dictionary as Markdown, a section per table."""
    lines = ["# Data dictionary", "",
             "Lists and mappings are JSON text in the CSV files (`json.loads` reads them back).", ""]
    for table in dict.fromkeys(r["table"] for r in rows):
        lines += [f"## {table}" + (f" ({record_names[table]})" if record_names.get(table) else ""), "",
                  "| column | type | present in | meaning |", "|---|---|---|---|"]
        lines += ["| " + " | ".join(cell(r[k]) for k in ("column", "type", "presence", "meaning")) + " |"
                  for r in rows if r["table"] == table]
        lines.append("")
    return "\n".join(lines)


def nested(v: Any) -> bool:
    return isinstance(v, (list, dict, tuple))


def as_json_text(df: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """``df`` with the nested values of ``cols`` written as JSON text."""
    out = df.copy()
    for c in cols:
        out[c] = [json.dumps(v, ensure_ascii=False) if nested(v) else v for v in out[c]]
    return out


def missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def as_text(df: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """``df`` with every value of ``cols`` as text (JSON for all but strings; missing stays missing)."""
    out = df.copy()
    for c in cols:
        out[c] = [v if isinstance(v, str) or missing(v) else json.dumps(v, ensure_ascii=False) for v in out[c]]
    return out


def nested_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if df[c].dtype == object and any(nested(v) for v in df[c])]


def mixed_columns(df: pd.DataFrame) -> list[str]:
    """Object columns whose values are of more than one kind (besides missing): pyarrow cannot type them."""
    kinds = {c: {type(v).__name__ for v in df[c] if not missing(v)}
             for c in df.columns if df[c].dtype == object}
    return [c for c, k in kinds.items() if len(k) > 1]


def write_table(df: pd.DataFrame, folder: Path, table: str) -> dict:
    """``folder/<table>.csv`` and, when pyarrow is installed, ``<table>.parquet``; what was written."""
    folder.mkdir(parents=True, exist_ok=True)
    as_json_text(df, nested_columns(df)).to_csv(folder / f"{table}.csv", index=False)
    done = {"table": table, "rows": len(df), "csv": f"{table}.csv", "parquet": None, "json_in_parquet": []}
    try:
        import pyarrow  # noqa: F401 - only to know whether Parquet can be written
    except ImportError:
        return done
    mixed = mixed_columns(df)
    try:
        as_text(df, mixed).to_parquet(folder / f"{table}.parquet", index=False)
    except (ValueError, TypeError, ArithmeticError):       # pyarrow's typing errors derive from these
        mixed = list(dict.fromkeys(mixed + nested_columns(df)))
        try:
            as_text(df, mixed).to_parquet(folder / f"{table}.parquet", index=False)
        except (ValueError, TypeError, ArithmeticError) as e:
            print(f"downloads: {table}.parquet not written ({type(e).__name__}: {str(e)[:120]})")
            return done
    return {**done, "parquet": f"{table}.parquet", "json_in_parquet": mixed}


def write_downloads(tables: dict[str, tuple[list[dict], Any]], folder: Path) -> list[dict]:
    """Every table of ``tables`` (name -> (rows, record type)) into ``folder`` with ``dictionary.md`` and
    ``dictionary.csv``; one row per table (a table without rows is its header, or no file when its columns
    are unknown: never an empty file)."""
    written, dictionary = [], []
    for name, (rows, kind) in tables.items():
        df = pd.DataFrame(rows) if rows else pd.DataFrame(columns=declared_columns(kind))
        if df.columns.empty:            # no row and no declared column: a file that would not load is not written
            written.append({"table": name, "rows": 0, "csv": None, "parquet": None, "json_in_parquet": []})
        else:                           # no row: the header alone, so the file still loads as an empty table
            written.append(write_table(df, folder, name))
        dictionary += dictionary_rows(name, kind)
    folder.mkdir(parents=True, exist_ok=True)
    names = {n: getattr(k, "__name__", "") for n, (_, k) in tables.items() if dataclasses.is_dataclass(k)}
    (folder / "dictionary.md").write_text(dictionary_markdown(dictionary, names))
    pd.DataFrame(dictionary).to_csv(folder / "dictionary.csv", index=False)
    return written
