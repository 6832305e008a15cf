"""What a human-sets run costs before it runs: no model call, but local work, counted at this machine's measured
rates: the words POS-tagged for templates, the texts embedded for diversity and prompt distance, the texts matched
against the creativity index. Sizes come from each set where it already lies (its variable, the staged copy, an
earlier download, else the bundled sample, said so): an estimate never downloads."""
from __future__ import annotations

from creval.datasets.base import resolve
from creval.studies.estimate.parts import Estimate, Phase, Range, local
from creval.studies.humansets.sets import SETS, chosen


def sizes(name: str) -> tuple[int, int, bool] | None:
    """``(texts, words, from the sample)`` of a declared set where it lies now; None where it cannot be read."""
    hs = SETS[name]
    try:
        src = resolve(hs.dataset)
        long, _ = hs.load(None, False)         # the same lookup: the loader never downloads here
    except Exception:                       # noqa: BLE001 - not here yet (the run downloads it) or a custom loader
        return None
    texts = long.drop_duplicates("id")
    return len(texts), int(texts["text"].astype(str).str.split().str.len().sum()), src.is_sample


def estimate(cfg) -> Estimate:
    measures, work, notes = set(cfg.humansets_measures), [], ["no model call: every measure is computed here"]
    for name in chosen(cfg.humansets_sets):
        got = sizes(name)
        if got is None:
            notes.append(f"{name}: its size is not known before the run reads it")
            continue
        n, words, sample = got
        if sample:
            notes.append(f"{name}: sized from the bundled sample (the real set, once downloaded, is larger)")
        if "templates" in measures:
            work.append(local("tagging", f"{name}: words POS-tagged for templates", words))
        if measures & {"diversity", "prompt"}:
            work.append(local("embedding", f"{name}: texts embedded (diversity, prompt distance)", n))
        if "ci" in measures:
            work.append(local("creativity-index", f"{name}: texts matched against the others", n))
    return Estimate("humansets", [Phase("measures", 0, Range(0, 0), (), local=tuple(work))] if work else [],
                    notes)
