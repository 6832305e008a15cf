"""A chapter's "What this build found" table, for the top of its page: each claim with this build's number (its n
and interval, as the study's reading wrote them), the word the book's one rule gives it, and why.

A study's reading returns its claims either as a table (one row per claim: the paper's claim, this build, the
verdict, its reason) or as the Markdown list :func:`creval.studies.claims.claims_md` writes (``- **word
(reason)**: claim evidence``). :func:`findings_frame` reads both into one shape; nothing is recomputed, only
laid out: the testable claims first, those this build cannot test after them.
"""
from __future__ import annotations

import re

import pandas as pd

from creval.book.plots import ShownTable
from creval.measures.stats.verdicts import TESTABLE

BULLET = re.compile(r"^- \*\*(?P<word>.+?)\*\*:\s*(?P<text>.*)$")
EVIDENCE = re.compile(r"(?<=[.):])\s+(?=(?:Here\b|This build\b|With\b|On this build\b|In this build\b|No\b|"
                      r"Only\b|Spearman\b|The test\b|Measured\b|Our\b))")     # where a claim's evidence starts
COLUMNS = ["claim", "this build", "word", "why"]


def inline(text: str) -> str:
    """One cell's Markdown (links, code, emphasis) as HTML, without the paragraph around it."""
    import mistune
    out = mistune.html(str(text)).strip()
    return re.sub(r"^<p>(.*)</p>$", r"\1", out, flags=re.S)


def split_word(word: str) -> tuple[str, str]:
    """A verdict written as ``word (reason)`` as (word, reason); a word without a reason as (word, "")."""
    m = re.match(r"^(?P<w>[^()]+?)\s*\((?P<r>.*)\)$", word.strip())
    return (m.group("w"), m.group("r")) if m else (word.strip(), "")


def from_markdown(md: str) -> tuple[pd.DataFrame, str]:
    """The claims of a ``claims_md`` list as rows, and the text after the list (the note on local models)."""
    rows, rest = [], []
    for line in md.strip().splitlines():
        m = BULLET.match(line)
        if m:
            word, why = split_word(m.group("word"))
            parts = EVIDENCE.split(m.group("text"), maxsplit=1)
            claim, build = (parts[0], parts[1]) if len(parts) == 2 else (m.group("text"), "")
            rows.append({"word": word, "claim": claim, "this build": build, "why": why})
        elif line.strip():
            rest.append(line.strip())
    return pd.DataFrame(rows, columns=COLUMNS), " ".join(rest)


def from_table(df: pd.DataFrame) -> pd.DataFrame:
    """A reading's claims table (columns named like claim, build, verdict and reason) in :data:`COLUMNS`."""
    def pick(*names):
        return next((c for c in df.columns if any(n in str(c).lower() for n in names)), None)
    claim, build, word, why = pick("claim"), pick("build", "here"), pick("verdict", "word"), pick("why", "reason")
    return pd.DataFrame({"word": df[word] if word else "", "claim": df[claim] if claim else "",
                         "this build": df[build] if build else "", "why": df[why] if why else ""})[COLUMNS]


def findings_frame(claims) -> tuple[pd.DataFrame, str]:
    """The claims (a table or a ``claims_md`` list) as rows of :data:`COLUMNS`, the testable ones first (their
    order kept), and any note that followed the list."""
    df, note = (from_markdown(claims) if isinstance(claims, str) else (from_table(claims), ""))
    if df.empty:
        return df, note
    untestable = df["word"].astype(str).str.startswith(TESTABLE)
    return pd.concat([df[~untestable], df[untestable]], ignore_index=True), note


def findings(claims, caption: str = "What this build found: each claim, this build's number, the book's word "
                                     "for it and why"):
    """The table a chapter opens with (see the module's docstring): cells' Markdown rendered, the CSV of the
    plain text beside it (:func:`creval.book.plots.table`); a sentence when the reading holds no claim."""
    from IPython.display import HTML, Markdown

    if isinstance(claims, pd.DataFrame) and claims.attrs.get("missing"):
        return Markdown(f"*No claim could be read from these records ({claims.attrs['missing']}).*")
    df, note = findings_frame(claims)
    if df.empty:
        return Markdown(claims if isinstance(claims, str) else "*No claim was tested on these records.*")
    shown = df.map(inline)
    sty = shown.style.hide(axis="index").set_properties(**{"text-align": "left", "vertical-align": "top"})
    sty = sty.set_caption(caption)
    out = ShownTable(sty, df, caption, fold_empty=False)      # the chapter's answer: shown, however thin
    return HTML(out._repr_html_() + (f"<p>{inline(note)}</p>" if note else "")) if note else out

