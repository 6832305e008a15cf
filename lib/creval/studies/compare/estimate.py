"""The estimate of chapter 09 (the comparison): its own calls are the pairwise judge's over the released outputs
(``pairwise_items`` items per dataset, every pair of models on each, both orders: one scored choice each) and
the equivalence judge's over ``equivalence_steps`` divergent steps (n - 1 to n(n - 1)/2 scored choices each).
Everything else it does (embeddings, entailment, the creativity index, BLEU) runs on local models or pure code,
and the upstream studies it reads are priced by their own estimators.

Sizes come from the loaders (cheap: the released outputs are one JSON file per dataset): the models of each
dataset and the items every one of them answered. Prompt tokens: the judge's prompt rendered on a real item with
both answers clipped to ``pairwise_words`` words."""
from __future__ import annotations

from creval.core.errors import CrevalError
from creval.judges.base import clip_words
from creval.judges.equivalence import messages as equivalence_messages
from creval.judges.pairwise import STANDARDS, messages
from creval.studies.compare.pairwise import items_for
from creval.studies.compare.released import macgyver_outputs, ttcw_outputs
from creval.studies.estimate.parts import Estimate, Part, Phase, Range, choices, msg_toks


def released_sizes(cfg) -> list[tuple[str, int, int, str, str, str]]:
    """Per dataset: ``(name, models, items judged, task, answer, other answer)`` (a real item's texts)."""
    out = []
    for name, load in (("macgyver", macgyver_outputs), ("ttcw", ttcw_outputs)):
        try:
            outs, df, _ = load(cfg.compare_released_items, cfg.data_seed)
        except CrevalError:
            continue
        import pandas as pd
        answers = pd.DataFrame([{"dataset": name, "item": it, "model": m, "text": o.answer(it)}
                                for m, o in outs.items() for it in o.items])
        items = items_for(answers, cfg.compare_pairwise_items, cfg.seed).get(name, []) if len(answers) else []
        if not items:
            continue
        x = answers[answers["item"] == items[0]]["text"].tolist()
        task = str(df["task"].iloc[0]) if "task" in df else ""
        out.append((name, len(outs), len(items), task, x[0], x[-1]))
    return out


def estimate(cfg) -> Estimate:
    """Units: one per dataset x item; each sends its pairs x 2 orders as one batch of scored choices."""
    parts: list[Part] = []
    units, notes, widest = 0, [], 1
    for name, k, n, task, x, y in released_sizes(cfg) if cfg.compare_pairwise_items else []:
        pairs = k * (k - 1) // 2
        prompt = msg_toks(messages(task, clip_words(x, cfg.compare_pairwise_words), clip_words(y,
                                                                                               cfg.compare_pairwise_words),
                                   STANDARDS.get(name, STANDARDS["default"])))
        parts.append(choices("judge", cfg.judge_model, f"pairwise judge ({name}: {k} models, {pairs} pairs x 2 "
                                                        f"orders x {n} items)", 2 * pairs * n, prompt))
        units += n
        widest = max(widest, 2 * pairs)
        notes.append(f"{name}: {k} released models, {n} items judged pairwise, {2 * pairs * n} scored choices")
    div = cfg.upstream()["divergent"]
    if cfg.compare_equivalence_steps:
        k = div.divergent_n_samples
        steps = min(cfg.compare_equivalence_steps, len(div.divergent_domains) * div.divergent_limit * len(cfg.tested))
        ask = msg_toks(equivalence_messages("a problem of about sixty words " * 6, "an answer " * 20,
                                            "an answer " * 20))
        parts.append(choices("judge", cfg.judge_model, f"equivalence judge ({steps} steps x {k} samples)",
                             Range(steps * (k - 1), steps * k * (k - 1) // 2), ask))
        units += steps
        notes.append(f"equivalence judge: {k - 1} to {k * (k - 1) // 2} comparisons per step (fewer when the "
                     "samples fall into few classes), one after another")
    notes.append("the released outputs' measures (creativity index, distinct-2, self-BLEU, embeddings) and the "
                 "homogeneity tables run on local models or pure code: no model call")
    pairs = div.divergent_n_samples * (div.divergent_n_samples - 1) // 2
    depth = Range(1, max(1, pairs)) if cfg.compare_equivalence_steps else Range(1, 1)
    return Estimate("compare", [Phase("pairwise and equivalence judges", units, depth, tuple(parts),
                                      breadth=widest)] if parts else [], notes)
