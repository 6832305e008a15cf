"""The chapters' "What this shows" lists: one bullet per claim, its verdict decided by the one rule
(:func:`creval.measures.stats.verdicts.claim_verdict`: supports / contradicts the paper, inconclusive here, not
testable here; :func:`every_row` for a claim tested on several rows), and a last line naming the local models
the verdicts rest on."""
from __future__ import annotations

from creval.measures.stats.verdicts import CONTRADICTS, ENOUGH, INCONCLUSIVE, SUPPORTS, TESTABLE, WORDS, Verdict
from creval.models.registry import BACKENDS
from creval.studies.contract import Records

__all__ = ["ENOUGH", "TESTABLE", "Verdict", "claims_md", "every_row", "local_models", "too_few_of"]

def local_models(recs: Records) -> list[str]:
    """The models of the run's manifest that ran on this machine (llama.cpp or transformers), with their weights."""
    return [f"`{k}` ({v.get('model', '?')})" for k, v in recs.manifest.get("models", {}).items()
            if v.get("backend") in BACKENDS and not BACKENDS[v["backend"]].server]


def claims_md(rows: list[tuple[str, str, str]], recs: Records | None = None) -> str:
    """A "What this shows" list: one bullet per ``(verdict, claim, evidence)``, the verdict in bold (*supports
    the paper*, *contradicts the paper*, *inconclusive here*, *not testable here*, with its reason and any
    borderline mark); given the records, a last line names the local models the verdicts rest on."""
    out = "\n".join(f"- **{v}**: {c} {e}".rstrip() for v, c, e in rows)
    local = local_models(recs) if recs is not None else []
    if local:
        out += (f"\n\nThese verdicts rest on local models ({', '.join(local)}): a small local model tests the "
                "pipeline more than the paper's claims about large models.")
    return out


def every_row(verdicts: list[Verdict]) -> Verdict:
    """One verdict for a claim that must hold on every row it is tested on (each model, judge, generator):
    *not testable here* when no row is testable (with the first row's reason), *contradicts the paper* when
    any testable row contradicts it, *supports the paper* when every testable row supports it, else
    *inconclusive here*. The reason counts the rows' words."""
    live = [v for v in verdicts if v.testable]
    if not live:
        return Verdict(TESTABLE, verdicts[0].reason if verdicts else "no row to test")
    words = [v.word for v in live]
    word = CONTRADICTS if CONTRADICTS in words else SUPPORTS if set(words) == {SUPPORTS} else INCONCLUSIVE
    counts = [f"{[v.word for v in verdicts].count(w)} {w}" for w in WORDS if w in {v.word for v in verdicts}]
    return Verdict(word, f"over {len(verdicts)} rows: " + ", ".join(counts),
                   borderline=any(v.borderline for v in live))


def too_few_of(n: int, units: str, min_n: int = ENOUGH) -> str | None:
    """The reason a claim carried by ``n`` independent ``units`` (problems, pairs, objects) is not testable,
    or None when there are enough: checked before any interval, which too few units cannot give."""
    return f"{n} {units}(s), fewer than the {min_n} a verdict needs" if n < min_n else None
