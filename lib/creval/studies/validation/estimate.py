"""What the validation study (chapter 04) costs before any call: novelty rankings (a pairwise judge in a merge
sort), the crowd's solutions beside the models' and the rerun at ``validation_n_large`` samples."""
from __future__ import annotations

from creval.judges.novelty import DEFINITIONS, judge_messages
from creval.studies.divergent.estimate import solve_parts
from creval.studies.estimate.parts import (
    ZERO,
    Estimate,
    Phase,
    Range,
    calls,
    choices,
    msg_toks,
    toks,
)
from creval.studies.estimate.sizes import aut_human_sizes, crowd_sizes, problems, typical_pair


def merge_comparisons(n: int) -> tuple[Range, Range]:
    """Comparisons of the novelty merge sort of ``n`` items (a merge of a and b items needs min(a, b) to
    a + b - 1) and its depth (the levels run one after another; a level takes its longest merge)."""
    if n < 2:
        return ZERO, ZERO
    a, b = n // 2, n - n // 2
    (ca, da), (cb, db) = merge_comparisons(a), merge_comparisons(b)
    here = Range(min(a, b), a + b - 1)
    depth = Range(max(da.lo, db.lo), max(da.hi, db.hi)) + here
    return ca + cb + here, depth


def novelty_phase(name: str, model: str, group_sizes, prompt_each: float) -> Phase:
    """Novelty rankings of groups of the given sizes, one unit each: each comparison asks both orders (two
    scored choices), and the comparisons of one level of a group's sort go out together."""
    n, depth = ZERO, ZERO
    for g in group_sizes:
        c, d = merge_comparisons(g)
        n, depth = n + c * 2, Range(max(depth.lo, d.lo), max(depth.hi, d.hi))
    return Phase(name, len([g for g in group_sizes if g > 1]), depth,
                 (choices("judge", model, f"novelty comparisons ({name})", n, prompt_each),),
                 breadth=max(group_sizes, default=1))


def estimate(cfg) -> Estimate:
    """Tan et al. 2026 section 6 and appendix H: novelty rankings (pairwise judge, merge sort), crowd vs model
    solutions, and the rerun at ``validation_n_large`` samples (H.2)."""
    div = cfg.divergent()                       # the divergent run whose steps are read and partly rerun
    problem, solution = typical_pair()
    cmp_prompt = msg_toks(judge_messages((problem, solution), (problem, solution), DEFINITIONS["macgyver"]))
    groups = [len(problems(d, div.divergent_limit, div.data_seed)) for m in cfg.tested for d in div.divergent_domains]
    sizes, text = aut_human_sizes(cfg.aut_items, cfg.aut_objects, cfg.aut_cambridge_items, cfg.data_seed)
    aut_prompt = msg_toks(judge_messages(("Uses for a brick", text), ("Uses for a brick", text), DEFINITIONS["aut"]))
    phases = [novelty_phase("chapter 02's solutions", cfg.judge_model, groups, cmp_prompt),
              novelty_phase("human-rated AUT responses", cfg.judge_model, [c for d, _, c in sizes if d == "ocsai1"],
                            aut_prompt),
              novelty_phase("labelled MacGyver solutions", cfg.judge_model, [2 * cfg.validation_macgyver_items],
                            cmp_prompt)]
    crowd = [min(c, div.divergent_n_samples) for c in crowd_sizes(cfg.validation_human_ref_problems, cfg.seed)]
    ask = toks(f"{problem}\nGive a short step-by-step solution.") + 4
    ref = tuple(calls("model", m, "whole solutions beside the crowd's", sum(crowd), ask,
                      cfg.validation_human_ref_max_tokens)
                for m in cfg.tested)
    phases.append(Phase("human reference", len(crowd) * len(cfg.tested), Range(1, 1), ref,
                        breadth=max(crowd, default=1)))
    d = div.divergent_domains[0]
    k = len(problems(d, min(cfg.validation_h2_limit, div.divergent_limit), div.data_seed))
    h2 = solve_parts(div, cfg.model, d, k, 0, cfg.validation_n_large, "H.2 rerun",
                     cached_samples=min(div.divergent_n_samples, cfg.validation_n_large))
    phases.append(Phase("H.2 rerun", k, Range(1, div.divergent_max_steps), tuple(h2), breadth=cfg.validation_n_large))
    return Estimate("validation", phases, ["H.2: the budget answer and the first divergent_n_samples samples of a step "
                                           "may come from chapter 02's cache (lower bound)"])
