"""Fig. 5 of Lu et al. (NAACL 2025) with one instrument: humans and GPT-4 compared on techniques found by the
same detector. The paper's Fig. 5 sets the humans' stored technique labels (GPT-4-detected upstream) against
GPT-4's codes; the labels of those codes were not released, so here our static detector reads both: GPT-4's
stored code of each state and every parsable human Python solution of the same problem (``human_detections``).
Each comparison is per problem (the independent unit), with a cluster bootstrap over problems. Pure: records
in, dicts out."""
from __future__ import annotations

import numpy as np

from creval.measures import neogauge as ng
from creval.measures.stats.resample import cluster_bootstrap
from creval.studies.neocoder.records import HumanDetectionRecord
from creval.studies.neocoder.report import codes_of, problems_of, state_rows
from creval.studies.tables import guard_module

STATIC = "comprehension = for loop"     # the variant of the static detector that read GPT-4's codes


def human_static(recs) -> dict[str, list[list[str]]]:
    """Per problem, the static detector's technique list of each parsable human Python solution."""
    out: dict[str, list[list[str]]] = {}
    for d in recs.rows("human_detections"):
        h = HumanDetectionRecord.from_dict(d)
        out.setdefault(h.problem_id, []).append(list(h.found.get(STATIC, [])))
    return out


def gaps(recs, t: int) -> dict:
    """At state ``t``, per problem with a scored code and human Python solutions: ``convergent`` = the share of
    the human solutions avoiding the state's banned set (Eq. 5) minus GPT-4's follow x correct (strict judge,
    Eq. 2); ``divergent`` = GPT-4's novelty against the humans' techniques (Eq. 3) minus the humans' mean
    leave-one-out novelty (Eq. 6). Each: mean over problems with a bootstrap interval and Monte-Carlo margins
    (``value``, ``lo``, ``hi``, ``mc``, ``n`` problems)."""
    humans, banned = human_static(recs), {p.problem_id: p.state_banned for p in problems_of(recs)}
    conv, div = [], []
    for r in state_rows(codes_of(recs), t, "all"):
        lists = humans.get(r.problem_id)
        if not lists or t >= len(banned.get(r.problem_id, [])):
            continue
        conv.append(ng.human_convergent([lists], [banned[r.problem_id][t]]) - float(r.follows and r.correct_strict))
        known = set().union(*map(set, lists))
        div.append(ng.novelty(r.techniques, known) - float(np.mean(ng.human_loo_novelty(lists))))
    out = {}
    for name, x in (("convergent", conv), ("divergent", div)):
        b = cluster_bootstrap(np.mean, np.asarray(x, float), n_boot=recs.cfg.n_boot, seed=recs.cfg.seed)
        out[name] = {"value": b["value"], "lo": b["lo"], "hi": b["hi"], "mc": (b["mc_lo"], b["mc_hi"]), "n": b["n"]}
    return out


guard_module(globals())
