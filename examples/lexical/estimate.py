"""What a lexical run costs before any call: each unit is one batch of ``lexical_samples`` samples."""
from __future__ import annotations

from creval.domains import get_domain
from creval.domains.steps import step_messages
from creval.studies.estimate import Estimate, Phase, Range, problems
from creval.studies.estimate.parts import calls, mean, msg_toks


def estimate(cfg) -> Estimate:
    dom, ps = get_domain("macgyver"), problems("macgyver", cfg.lexical_problems, cfg.data_seed)
    prompt = mean(msg_toks(step_messages(dom, p, [], max_steps=5)) for p in ps)
    n = len(ps) * cfg.lexical_samples
    parts = tuple(calls("model", m, "first-step answers", n, prompt, cfg.lexical_max_tokens) for m in cfg.tested)
    return Estimate("lexical", [Phase("answers", len(ps) * len(cfg.tested), Range(1, 1), parts,
                                      breadth=cfg.lexical_samples)])
