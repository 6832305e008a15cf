"""The book pipeline: run every study (in dependency order), execute every chapter with papermill, render.

``build_book(params, out)`` first runs each study (:mod:`creval.book.studies`: every model, judge and sandbox
call, into the studies' run folders), then runs the chapters listed in ``_quarto.yml`` (in order) into
``out/chapters/*.ipynb`` and renders ``out/site``: with Quarto when the ``quarto`` binary exists,
otherwise an offline HTML book (nbconvert pages with a table of contents; plotly inlined, no CDN).
Each chapter's kernel streams its model calls to ``out/ledger/<chapter>.jsonl``; the build writes
``out/book-manifest.json`` with calls made vs served from cache, tokens, cost and timings per study and
per chapter (a chapter only reads records, so its calls should be 0).
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

from creval.book.execute import execute_chapters
from creval.book.params import effective_params
from creval.book.publish import publish
from creval.book.render import render_offline, render_quarto
from creval.book.studies import measure_slow_models, run_studies, slowest_phases, start_state
from creval.core.io import read_jsonl
from creval.core.ledger import CallRecord, Ledger, merge_usage
from creval.core.runs import git_commit, package_versions
from creval.models import throughput
from creval.studies.estimate import ZERO, estimate, speed, wall
from creval.studies.registry import STUDIES, in_order


def _minutes(r) -> str:
    """A Range of seconds as minutes, or hours from two hours on."""
    (lo, hi), unit = ((r.lo / 3600, r.hi / 3600), "h") if r.lo >= 7200 else ((r.lo / 60, r.hi / 60), "min")
    fmt = "{:.1f}" if unit == "h" else "{:.0f}"
    a, b = fmt.format(lo), fmt.format(hi)
    return f"{a} {unit}" if a == b else f"{a}..{b} {unit}"


def busy_note(model: str, figures: dict) -> str:
    """One line when ``model``'s speed was measured on a busy machine (load above its cores): the times above
    rest on that speed, and a quieter machine runs faster (``creval throughput MODEL --force`` measures again);
    else empty."""
    load, cores = figures.get("load"), os.cpu_count() or 1
    if load is None or load <= cores:
        return ""
    return (f"note: {model}'s speed ({figures.get('prefill_tps')} prompt and {figures.get('decode_tps')} reply "
            f"tokens/s) was measured {figures.get('measured', '?')} at load {load:g} on {cores} cores, a busy machine: "
            f"on a quieter one the book runs faster than said (`creval throughput {model} --force` measures again)")


class BookPlan:
    """What the book will do on this machine, said before its first call: per study its calls, tokens and the
    minutes the estimate (:mod:`creval.studies.estimate`, ``creval estimate``) gives at this machine's measured
    speed; then, as each study ends, a whole-book line with the time left."""

    def __init__(self, rows: list[dict], unknown: list[str], speeds: dict | None = None):
        self.rows, self.unknown, self.t0, self.ended = rows, unknown, time.time(), set()
        self.speeds = speeds or {}          # model -> its stored throughput figures (what the times rest on)

    @classmethod
    def of(cls, params: dict, names: list[str], measure: bool = True) -> "BookPlan":
        """The plan of ``names`` and the studies they read. With ``measure``, a local model whose speed on this
        machine is not stored yet is measured first (``creval throughput``: seconds, once per machine)."""
        rows, speeds, unknown, figures = [], {}, [], {}
        for st in in_order(names, params):
            row = {"study": st.name, "calls": ZERO, "tokens": ZERO, "wall": ZERO, "why": ""}
            try:
                cfg = st.make_config(params)
                if start_state(cfg.run_dir) == "finished":
                    row["why"] = "finished already: read back"
                    rows.append(row)
                    continue
                est = estimate(cfg)
                for m in {p.model for p in est.parts} - set(speeds):
                    if measure and throughput.load(m) is None and not throughput.behind_api(m):
                        print(f"measuring {m}'s speed on this machine for the book's estimate (once)",
                              file=sys.stderr, flush=True)
                        throughput.ensure(m)
                    speeds[m] = speed(m)
                    if speeds[m] is None:
                        unknown.append(m)
                    elif (stored := throughput.load(m)):
                        figures[m] = stored
                row["calls"] = sum((p.calls for p in est.parts), ZERO)
                row["tokens"] = sum((p.prompt + p.completion for p in est.parts), ZERO)
                row["wall"] = wall(est, speeds)
            except Exception as e:   # noqa: BLE001 - the plan is a courtesy: the book runs without it
                row.update(calls=None, tokens=None, wall=None, why=f"no estimate ({type(e).__name__}: {e})")
            rows.append(row)
        return cls(rows, unknown, figures)

    def left(self):
        """Seconds the studies not ended yet are expected to take (a Range), or None where one is unknown."""
        todo = [r["wall"] for r in self.rows if r["study"] not in self.ended]
        return None if any(w is None for w in todo) else sum(todo, ZERO)

    def start(self) -> str:
        """The lines printed before the first call."""
        def fig(x) -> str:
            return "?" if x is None else f"{x.lo:,.0f}" if round(x.lo) == round(x.hi) else f"{x.lo:,.0f}..{x.hi:,.0f}"

        def told(r: dict) -> str:
            if r["why"].startswith("finished"):
                return r["why"]
            time_ = "time unknown" if r["wall"] is None else _minutes(r["wall"])
            why = f"; {r['why']}" if r["why"] else ""
            return f"{fig(r['calls'])} calls, {fig(r['tokens'])} tokens, {time_}{why}"
        known = [r for r in self.rows if r["calls"] is not None]
        calls = sum((r["calls"] for r in known[1:]), known[0]["calls"]) if known else None
        tokens = sum((r["tokens"] for r in known[1:]), known[0]["tokens"]) if known else None
        left = self.left()
        when = (f"{_minutes(left)} for the studies at this machine's measured speed, then the chapters"
                if left is not None else "time unknown (no measured speed for " + ", ".join(self.unknown or ["a study"])
                + ": `creval throughput MODEL` measures a local model; a server's spec can say extra: {latency_s, "
                  "tokens_per_s})")
        n = f"{len(self.rows)} stud{'y' if len(self.rows) == 1 else 'ies'}"
        return "\n".join([f"the book will run {n} on this machine (before any call; `creval estimate` gives the "
                          "detail):", *[f"  {r['study']}: {told(r)}" for r in self.rows],
                          f"book: {fig(calls)} calls, {fig(tokens)} tokens; expected {when}",
                          *filter(None, (busy_note(m, f) for m, f in self.speeds.items()))])

    def after(self, row: dict) -> str:
        """The whole-book line once ``row``'s study has ended: studies done, minutes spent, time left."""
        self.ended.add(row["study"])
        spent = (time.time() - self.t0) / 60
        left = self.left()
        said = "no study left" if not left or not left.hi else (
            f"about {_minutes(left)} left by the estimate" if left is not None else "time left unknown")
        return (f"book: {len(self.ended)} of {len(self.rows)} studies done ({row['study']} "
                f"{'FAILED' if row.get('error') else 'ok'}) in {spent:.1f} min; {said}, then the chapters")


def build_book(params: dict, out: Path, only: list[str] | None = None, render: str = "auto",
               progress: bool = True, source: Path | None = None) -> dict:
    """Execute and render the whole book; returns (and writes) the book manifest. ``source``: the folder the
    chapter notebooks are read from (default: the checkout)."""
    out = Path(out)
    t0 = time.time()
    chosen = [n for n, s in STUDIES.items() if not only or any(o in Path(s.chapter).stem for o in only)]
    plan = BookPlan.of(effective_params(params), chosen, measure=progress) if chosen else None
    if plan is not None:
        print(plan.start(), file=sys.stderr, flush=True)
    studies = run_studies(effective_params(params), chosen,
                          done=lambda row: print(plan.after(row), file=sys.stderr, flush=True)) if chosen else []
    t_studies = time.time() - t0
    failed = {STUDIES[r["study"]].chapter: r["error"] for r in studies if r["error"]}
    status = execute_chapters(params, out, only, progress, skip=failed, source=source)
    t_exec = time.time() - t0 - t_studies
    index, renderer = None, None
    if render != "none":
        use_quarto = render == "quarto" or (render == "auto" and bool(shutil.which("quarto")))
        index = render_quarto(out) if use_quarto else render_offline(out)
        renderer = "quarto" if use_quarto else "offline-html"
    t_pub = time.time()          # the item browsers and downloads (book/publish.py): never fails the book
    published = publish(out / "site", effective_params(params), chosen) if index is not None else []
    t_pub = time.time() - t_pub
    records = [CallRecord(**r) for f in sorted((out / "ledger").glob("*.jsonl")) for r in read_jsonl(f)]
    usage = merge_usage([Ledger.summarize(records)] + [{"total": r["usage"], "by_kind_model": r["by_kind_model"]}
                                                       for r in studies])   # chapters' calls + the studies' calls
    measure_slow_models(studies)
    manifest = {"params": effective_params(params), "git_commit": git_commit(), "packages": package_versions(),
                "seconds_studies": round(t_studies, 2), "seconds_execute": round(t_exec, 2),
                "seconds_total": round(time.time() - t0, 2), "studies": studies,
                "slowest_phases": slowest_phases(studies), "chapters": status, "usage": usage,
                "index": str(index) if index else None, "published": published,
                "seconds_publish": round(t_pub, 2),
                "renderer": renderer}
    (out / "book-manifest.json").write_text(json.dumps(manifest, indent=2, default=str))
    return manifest
