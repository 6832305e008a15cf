"""What the apparatus study (chapter 01) costs before any call: one batch of first-step samples."""
from __future__ import annotations

from creval.domains import get_domain
from creval.domains.steps import step_messages
from creval.studies.estimate.parts import (
    Estimate,
    Phase,
    Range,
    calls,
    msg_toks,
)
from creval.studies.estimate.sizes import problems


def estimate(cfg) -> Estimate:
    dom = get_domain("macgyver")
    p = problems("macgyver", 1, cfg.data_seed)[0]
    part = calls("model", cfg.model, "first-step samples", cfg.apparatus_samples,
                 msg_toks(step_messages(dom, p, [], max_steps=5)), cfg.apparatus_max_tokens)
    return Estimate("apparatus", [Phase("samples", 1, Range(1, 1), (part,), breadth=cfg.apparatus_samples)])
