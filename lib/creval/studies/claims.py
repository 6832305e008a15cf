"""The chapters' "What this shows" lists: one bullet per claim, its verdict decided by the one rule
(:func:`creval.measures.stats.decide`), and a last line naming the local models the verdicts rest on."""
from __future__ import annotations

from creval.models.base import SERVER_BACKENDS
from creval.measures.stats import ENOUGH, TESTABLE, Verdict, decide
from creval.studies.contract import Records

__all__ = ["ENOUGH", "TESTABLE", "Verdict", "claims_md", "decide", "local_models", "verdict"]

def verdict(ok: bool | None, n: int, sample: bool = False, degenerate: str | None = None,
            min_n: int = ENOUGH) -> Verdict:
    """:func:`~creval.measures.stats.decide`, in the argument order the chapters use."""
    return decide(ok, n, degenerate=degenerate, min_n=min_n, sample=sample)


def local_models(recs: Records) -> list[str]:
    """The models of the run's manifest that ran on this machine (llama.cpp or transformers), with their weights."""
    return [f"`{k}` ({v.get('model', '?')})" for k, v in recs.manifest.get("models", {}).items()
            if v.get("backend") and v.get("backend") not in SERVER_BACKENDS]


def claims_md(rows: list[tuple[str, str, str]], recs: Records | None = None) -> str:
    """A "What this shows" list: one bullet per ``(verdict, claim, evidence)``, the verdict in bold
    (*reproduced*, *not reproduced*, *not testable here*); given the records, a last line names the local
    models the verdicts rest on."""
    out = "\n".join(f"- **{v}**: {c} {e}".rstrip() for v, c, e in rows)
    local = local_models(recs) if recs is not None else []
    if local:
        out += (f"\n\nThese verdicts rest on local models ({', '.join(local)}): a small local model tests the "
                "pipeline more than the paper's claims about large models.")
    return out
