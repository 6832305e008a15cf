"""The NeoCoder study's run (chapter 05): every sandbox execution, model call and technique detection.

:func:`run` writes the study's one run folder (``cfg.run_dir``):

- ``data_source`` (one row): where the problems come from, how many are replayed, their rounds and test cases;
- ``problems`` (one :class:`ProblemRecord` per problem of the release): flags, the round and the banned list
  of each state, the stored human technique lists;
- ``codes`` (one :class:`CodeRecord` per replayed (problem, round)): GPT-4's stored code under both judges
  (:mod:`creval.measures.neocoder.judges`, in the sandbox, cached by content), its techniques (``neocoder_detector``,
  on the cleaned program), following and novelty;
- ``known_positives`` and ``human_detections``: the static detector's two definitions on the codes whose
  techniques GPT-4 detected (each ban drawn at round r was detected in code r-1) and on the human solutions;
- ``rounds`` (one :class:`RoundRecord` per live round, for every model in ``cfg.tested``): Algorithm 1 (see
  :func:`denial_prompting`; ``neocoder_live_mode="thread"``) or the paper's benchmarking mode
  (:func:`benchmark_problem`; ``"fresh"``) on the ``neocoder_live_problems`` shortest verifiable problems.

Units (:func:`study_units`, run by :func:`creval.core.units.run_units` into ``units/neocoder.jsonl``; a
rerun does only the unfinished ones): each ``CHUNK`` replayed problems, the detector check, and each live
problem under each model under test. The live units run together up to the models' in-flight budget when
they are servers; inside one, the rounds stay a chain (each round's detection feeds the next round's ban)
and its sandbox runs serialise with every other local computation.

Algorithm 1 (denial prompting) and the benchmarking mode live in :mod:`creval.studies.neocoder.denial`.
"""
from __future__ import annotations

import hashlib
from functools import partial
from pathlib import Path

from creval.core import units
from creval.core.errors import CrevalError
from creval.core.units import Unit
from creval.datasets import neocoder as neocoder_data
from creval.datasets.base import provenance
from creval.judges.registry import make_judge
from creval.judges.techniques import HybridDetector
from creval.measures.neocoder import judges as nc
from creval.measures.neocoder_extract import salvaged, strict_program
from creval.measures.neogauge import follows, novelty
from creval.measures.techniques import StaticDetector
from creval.models import registry
from creval.models import width as widths
from creval.studies import contract
from creval.studies.neocoder.config import NeoCoderConfig
from creval.studies.neocoder.denial import (
    SOLVER_PROMPT,
    benchmark_problem,
    constrained_statement,
    denial_prompting,
    detect_program,
    draw_ban,
    human_union,
    live_rounds,
)
from creval.studies.neocoder.records import (
    CodeRecord,
    DataSourceRecord,
    HumanDetectionRecord,
    PositiveRecord,
    ProblemRecord,
)

__all__ = ["SOLVER_PROMPT", "benchmark_problem", "constrained_statement", "denial_prompting", "draw_ban",
           "run"]

CHUNK = 20                  # replayed problems judged in one unit (one sandbox batch)
# the two definitions of the ambiguous technique names compared by the detector check
DETECTOR_VARIANTS = {"comprehension = for loop": StaticDetector(),
                     "strict syntax": StaticDetector(comprehension_is_for_loop=False, ternary_is_if=False)}


def check(cfg: NeoCoderConfig) -> None:
    """Refuse a setting no part of the study knows, before any work."""
    for key, allowed in (("neocoder_comparator", ("lines", "tokens")),
                         ("neocoder_pack", ("problem", "program", "none")),
                         ("neocoder_detector", ("static", "llm", "hybrid")),
                         ("neocoder_live_mode", ("thread", "fresh"))):
        if getattr(cfg, key) not in allowed:
            raise CrevalError(f"{key} = {getattr(cfg, key)!r} is not known", f"use one of: {', '.join(allowed)}")
    if cfg.neocoder_problems < 0 or cfg.neocoder_live_problems < 0 or cfg.neocoder_rounds < 0:
        raise CrevalError("neocoder_problems, neocoder_live_problems and neocoder_rounds must be >= 0",
                          "use 0 (all problems, no live problem, no denial round) or a positive number")


def make_detector(cfg: NeoCoderConfig, store=None):
    """The technique detector ``cfg.neocoder_detector``; the llm and hybrid ones ask ``cfg.judge_model``
    (the judge ``techniques``), noted in ``store``'s manifest."""
    if cfg.neocoder_detector == "static":
        return StaticDetector()
    judge = registry.load_model(cfg.judge_model)
    if store is not None:
        store.note_model(judge)
    llm = make_judge("techniques", judge)
    return llm if cfg.neocoder_detector == "llm" else HybridDetector(StaticDetector(), llm)


def replayed(cfg: NeoCoderConfig, problems):
    """The replayed problems: the first ``neocoder_problems`` in upstream order (0 = all)."""
    return list(problems[:cfg.neocoder_problems or None])


# ---------------------------------------------------------------------------------------------------
# the problems and the replay of the stored rounds

def problem_record(p: neocoder_data.Problem, is_replayed: bool) -> ProblemRecord:
    st = p.states
    f = p.flag_row()
    return ProblemRecord(
        p.problem_id, p.native, is_replayed, len(p.rounds), len(p.cases), [st[t] for t in sorted(st)],
        [list(p.rounds[st[t]].banned) for t in sorted(st)], [list(t) for t in p.human_techniques],
        f["single_test"], f["yes_no"], f["padded_output"], f["multiline_answer"], f["input_flattened"],
        f["needs_checker"], f["no_humans"], f["verifiable"], f["n_humans"])


def replay_problems(cfg: NeoCoderConfig, problems, detector, progress: bool = False) -> list[CodeRecord]:
    """One record per stored (problem, round) of ``problems``: both judges' verdicts, techniques, following,
    novelty."""
    items = [(p, rd.code) for p in problems for rd in p.rounds]
    verdicts = nc.judge_codes(items, comparator=cfg.neocoder_comparator, progress=progress,
                           workers=cfg.neocoder_workers or None, pack=cfg.neocoder_pack, salvage=cfg.neocoder_salvage)
    dets = detect_program(detector, [c for _, c in items])
    rows, k = [], 0
    for p in problems:
        state_of = {r: t for t, r in p.states.items()}
        humans = human_union(p)
        for rd in p.rounds:
            v, d = verdicts[k], dets[k]
            k += 1
            rows.append(CodeRecord(
                problem_id=p.problem_id, round=rd.r, state=state_of.get(rd.r), banned=list(rd.banned),
                code_sha=hashlib.sha256(rd.code.encode()).hexdigest()[:16], repo=v["repo"].to_dict(),
                strict=v["strict"].to_dict(), correct_repo=v["repo"].correct, correct_strict=v["strict"].correct,
                salvaged=salvaged(rd.code), detector=getattr(detector, "name", "?"), techniques=list(d.techniques),
                detection_status=d.status, follows=follows(d.techniques, rd.banned),
                novel=sorted(set(d.techniques) - humans), novelty=novelty(d.techniques, humans),
                has_humans=bool(p.human_solutions), verifiable=p.flags.verifiable, code=rd.code))
    return rows


def known_positives(problems) -> list[PositiveRecord]:
    """Each ban drawn at round r of a problem, with the code of round r-1 (where GPT-4 detected it), and
    whether each static-detector variant finds it in that code (on the cleaned program)."""
    positives = []
    for p in problems:
        for r in range(1, len(p.rounds)):
            for b in p.rounds[r].banned:
                if b not in p.rounds[r - 1].banned:
                    positives.append((p.problem_id, r - 1, b, p.rounds[r - 1].code))
    codes = sorted({c for *_, c in positives})
    found = {k: dict(zip(codes, v.detect([strict_program(c) or c for c in codes])))
             for k, v in DETECTOR_VARIANTS.items()}
    return [PositiveRecord(pid, r, b, {k: b in found[k][c].techniques for k in DETECTOR_VARIANTS})
            for pid, r, b, c in positives]


def human_detections(problems) -> list[HumanDetectionRecord]:
    """What each static-detector variant finds in every parsable human solution, beside its stored labels."""
    rows = []
    for p in problems:
        for i, (src, labels) in enumerate(zip(p.human_solutions, p.human_techniques)):
            dets = {k: v.detect_one(src) for k, v in DETECTOR_VARIANTS.items()}
            if any(d.status == "not_parsable" for d in dets.values()):
                continue
            rows.append(HumanDetectionRecord(p.problem_id, i, list(labels),
                                             {k: list(d.techniques) for k, d in dets.items()}))
    return rows


def live_problems(cfg: NeoCoderConfig, problems) -> list[neocoder_data.Problem]:
    """The live run's problems: the ``neocoder_live_problems`` verifiable multi-test problems with human
    solutions and the shortest statements (ties by id)."""
    ok = [p for p in problems if p.flags.verifiable and not p.flags.single_test and p.human_solutions]
    return sorted(ok, key=lambda p: (len(p.statement), p.native))[:cfg.neocoder_live_problems]


# ---------------------------------------------------------------------------------------------------

def study_units(cfg: NeoCoderConfig, ps, live, models, detector) -> list[Unit]:
    """The study's independent units: each ``CHUNK`` replayed problems (their codes under both judges, one
    sandbox batch), the detector check's two tables, and each live problem under each model under test (a
    chain of rounds: Algorithm 1)."""
    out = [Unit(f"replay/{i // CHUNK}", ("codes", partial(replay_problems, cfg, ps[i:i + CHUNK], detector)))
           for i in range(0, len(ps), CHUNK)]
    out += [Unit("known_positives", ("known_positives", partial(known_positives, ps))),
            Unit("human_detections", ("human_detections", partial(human_detections, ps)))]
    return out + [Unit(f"live/{m.name}/{p.problem_id}", ("rounds", partial(live_rounds, cfg, m, p, detector)))
                  for m in models for p in live]


def unit_rows(u: Unit) -> dict[str, list]:
    """The work of a unit of :func:`study_units`: its one table's records."""
    table, records = u.item
    return {table: [r.to_dict() for r in records()]}


def run(cfg: NeoCoderConfig) -> Path:
    """Every NeoCoder record of ``cfg`` into ``cfg.run_dir`` (see the module doc); resumable unit by unit."""
    check(cfg)
    store = contract.start(cfg)
    everything, src = neocoder_data.load()
    ps = replayed(cfg, everything)
    store.write("data_source", [DataSourceRecord(
        provenance(neocoder_data.DATASET, src, "NeoCoder problems, stored GPT-4 rounds and tests"), len(ps),
        sum(len(p.rounds) for p in ps), sum(len(p.cases) for p in ps), src.is_sample).to_dict()])
    keep = {p.problem_id for p in ps}
    store.write("problems", [problem_record(p, p.problem_id in keep).to_dict() for p in everything])
    detector = make_detector(cfg, store)
    models = [registry.load_model(name) for name in cfg.tested]
    for m in models:
        store.note_model(m)
    judge = (cfg.judge_model,) if cfg.neocoder_detector != "static" else ()
    tables = units.run_units(cfg.run_dir, "neocoder", study_units(cfg, ps, live_problems(cfg, everything), models,
                                                                  detector),
                             unit_rows, width=widths.width(*cfg.tested, *judge), desc="neocoder · replay, live rounds")
    for table in ("codes", "known_positives", "human_detections", "rounds"):
        store.write(table, tables.get(table, []))
    return contract.finish(store)
