"""``quarto render`` gives the executed book: Quarto's pre-render step (``_quarto.yml``, ``project: pre-render``).

The chapters are committed without outputs and ``_quarto.yml`` turns Quarto's own execution off, so Quarto
alone would render empty chapters. Before it reads them, Quarto runs ``book/prerender_hook.py``, which runs
this module (``python -m creval.book.prerender``) with Quarto's variables (``QUARTO_PROJECT_RENDER_ALL``,
``QUARTO_PROJECT_INPUT_FILES`` or the file ``QUARTO_USE_FILE_FOR_PROJECT_INPUT_FILES`` names):

1. put back any chapter an earlier, killed render left executed (see 4);
2. copy each chapter to render, as it is in the checkout, to ``_build/quarto-prerender/originals/``;
3. run ``creval book``'s pipeline on ``params/default.yaml`` without rendering (:func:`build_book`: every
   study the chapters read, resumable and cached, then each chapter executed by papermill from those copies
   into ``_build/default/chapters/``); a failed study or chapter stops here, exit 1, and Quarto with it:
   never an empty book;
4. write each executed notebook over its chapter (Quarto renders the outputs it finds) and start a
   watcher, detached from Quarto, that waits for the Quarto process to end, however it ends, and then puts
   every chapter back byte for byte (a chapter changed since it was written is left alone, with a warning).
   A later render, ``quarto preview``'s re-renders included, reuses a staging whose watcher still runs.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from creval.book.build import build_book
from creval.book.execute import book_structure
from creval.book.params import load_params
from creval.core import paths
from creval.core.errors import CrevalError

STAGE = Path("_build") / "quarto-prerender"     # under the root: originals/, staged.json, watcher.log
STATE = "staged.json"
DEFAULT_PARAMS = "params/default.yaml"


def digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def book_chapters(root: Path) -> list[str]:
    """The notebook chapters of ``root/_quarto.yml``, in book order."""
    return [f for _, f in book_structure(root / "_quarto.yml") if f.endswith(".ipynb")]


def quarto_chapters(env: Mapping[str, str], root: Path) -> list[str]:
    """The chapters this Quarto render covers: every one on a render of the whole project
    (``QUARTO_PROJECT_RENDER_ALL=1``, or no list of input files), else those among its input files."""
    chapters = book_chapters(root)
    listed = env.get("QUARTO_PROJECT_INPUT_FILES")
    if listed is None and env.get("QUARTO_USE_FILE_FOR_PROJECT_INPUT_FILES"):
        listed = Path(env["QUARTO_USE_FILE_FOR_PROJECT_INPUT_FILES"]).read_text()
    if env.get("QUARTO_PROJECT_RENDER_ALL") == "1" or listed is None:
        return chapters
    given = {Path(f.strip()).as_posix() for f in listed.splitlines() if f.strip()}
    return [c for c in chapters if c in given]


def read_state(stage: Path) -> dict:
    f = stage / STATE
    return json.loads(f.read_text()) if f.is_file() else {"watcher": None, "chapters": {}}


def write_state(stage: Path, state: dict) -> None:
    stage.mkdir(parents=True, exist_ok=True)
    (stage / STATE).write_text(json.dumps(state, indent=1))


def alive(pid: int | None) -> bool:
    """Whether process ``pid`` still runs (a zombie counts as running until its parent reaps it)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def restore(root: Path, stage: Path) -> list[str]:
    """Put every staged chapter back as it was before the render; returns those restored. A chapter whose
    content is neither the executed copy written nor its original (edited since) is left as it is."""
    state, done = read_state(stage), []
    for ch, sums in state["chapters"].items():
        target, original = root / ch, stage / "originals" / ch
        now = digest(target)
        if now == sums["staged"] and original.is_file():
            shutil.copyfile(original, target)
            done.append(ch)
        elif now not in (sums["original"], sums["staged"]):
            print(f"creval pre-render: {ch} changed during the render; left as it is (its version before the "
                  f"render: {original})", file=sys.stderr)
            continue
        original.unlink(missing_ok=True)
    (stage / STATE).unlink(missing_ok=True)
    return done


def back_up(root: Path, stage: Path, chapters: list[str], state: dict) -> None:
    """Copy each chapter not staged yet, as it is now, to ``stage/originals`` (the sources papermill runs)."""
    for ch in chapters:
        if ch in state["chapters"]:
            continue
        dst = stage / "originals" / ch
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / ch, dst)
        state["chapters"][ch] = {"original": digest(dst), "staged": None}


def stage_executed(root: Path, executed: Path, chapters: list[str], state: dict) -> None:
    """Write each executed notebook over its chapter (only when it differs: a watching ``quarto preview``
    sees no change when nothing changed)."""
    for ch in chapters:
        src = executed / ch
        if digest(src) != digest(root / ch):
            shutil.copyfile(src, root / ch)
        state["chapters"][ch]["staged"] = digest(src)


def start_watcher(root: Path, stage: Path, pid: int) -> int:
    """A process, detached from this one and from Quarto's pipes, that restores the chapters once ``pid``
    (the Quarto process) has ended. Returns its process id."""
    log = open(stage / "watcher.log", "a")
    try:
        proc = subprocess.Popen([sys.executable, "-m", "creval.book.prerender", "--root", str(root),
                                 "--restore-after", str(pid)], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                cwd=str(root), start_new_session=True)
    finally:
        log.close()
    return proc.pid


def failures(manifest: dict) -> list[str]:
    return ([f"study {s['study']}: {s['error']}" for s in manifest["studies"] if s["error"]]
            + [f"chapter {c['chapter']}: {c['error']}" for c in manifest["chapters"] if c["error"]])


def prerender(env: Mapping[str, str], root: Path = paths.REPO, params: dict | None = None,
              out: Path | None = None, wait_pid: int | None = None, build: Callable = build_book) -> int:
    """Quarto's pre-render step (the module docstring): 0 when the chapters Quarto will render hold their
    outputs, 1 (Quarto stops) when a study or chapter failed. ``wait_pid``: the process whose end restores the
    chapters (the Quarto process; ``None``: the caller restores them with :func:`restore`)."""
    stage = root / STAGE
    state = read_state(stage)
    if state["chapters"] and not alive(state["watcher"]):
        restore(root, stage)                              # an earlier render was killed with its watcher
        state = read_state(stage)
    chapters = quarto_chapters(env, root)
    if not chapters:
        return 0
    params = load_params(root / DEFAULT_PARAMS) if params is None else params
    out = root / "_build" / "default" if out is None else out
    back_up(root, stage, chapters, state)
    write_state(stage, state)
    stems = [Path(c).stem for c in chapters]
    try:
        manifest = build(params, out, stems, render="none", progress=False, source=stage / "originals")
    except BaseException:
        if not alive(state["watcher"]):
            restore(root, stage)                          # nothing staged yet: only the copies to drop
        raise
    bad = failures(manifest)
    if bad:
        if not alive(state["watcher"]):
            restore(root, stage)
        print("creval pre-render: the book was not rendered, since " + "; ".join(bad)
              + f" (executed notebooks and book-manifest.json in {out}; `make book` builds the offline book)",
              file=sys.stderr)
        return 1
    stage_executed(root, out, chapters, state)
    if wait_pid is not None and not alive(state["watcher"]):
        state["watcher"] = start_watcher(root, stage, wait_pid)
    write_state(stage, state)
    print(f"creval pre-render: {len(chapters)} chapters executed (records and notebooks in {out}); "
          f"Quarto renders them, then they are put back as committed", file=sys.stderr)
    return 0


def restore_after(root: Path, pid: int, poll_s: float = 0.5) -> list[str]:
    """Wait until process ``pid`` has ended, then :func:`restore` the chapters."""
    while alive(pid):
        time.sleep(poll_s)
    return restore(root, root / STAGE)


def check_checkout(root: Path, cwd: Path) -> str | None:
    """Why this install cannot serve the Quarto project at ``cwd`` (``None`` when it can)."""
    if (cwd / "_quarto.yml").is_file() and cwd.resolve() != root.resolve():
        return (f"creval is installed from {root}, but Quarto renders {cwd}: install this checkout "
                f"(`make setup`) or render {root}")
    return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m creval.book.prerender", description=__doc__.split("\n")[0])
    p.add_argument("--root", type=Path, default=paths.REPO, help="the checkout whose chapters are staged")
    p.add_argument("--params", default=DEFAULT_PARAMS, help="parameter file (default: %(default)s)")
    p.add_argument("-p", dest="overrides", action="append", default=[],
                   metavar="KEY=VALUE", help="override one parameter")
    p.add_argument("--out", type=Path, default=None, help="build folder (default: <root>/_build/default)")
    p.add_argument("--plan", action="store_true", help="print the chapters this render covers; do nothing")
    p.add_argument("--restore-after", type=int, metavar="PID", help="wait for PID to end, then restore")
    p.add_argument("--restore", action="store_true", help="put the chapters back now")
    args = p.parse_args(argv)
    root = args.root
    if args.restore_after is not None:
        restore_after(root, args.restore_after)
        return 0
    if args.restore:
        print("\n".join(restore(root, root / STAGE)))
        return 0
    problem = check_checkout(root, Path.cwd())
    if problem:
        print(f"creval pre-render: {problem}", file=sys.stderr)
        return 1
    if args.plan:
        print("\n".join(quarto_chapters(os.environ, root)))
        return 0
    under_quarto = "QUARTO_PROJECT_OUTPUT_DIR" in os.environ     # Quarto sets it for every project script
    try:
        params = load_params(root / args.params if not Path(args.params).is_absolute() else args.params, args.overrides)
        code = prerender(os.environ, root, params, args.out, wait_pid=os.getppid() if under_quarto else None)
    except CrevalError as e:
        print(f"creval pre-render: {e}", file=sys.stderr)
        return 1
    if code == 0 and not under_quarto:
        print("creval pre-render: not run by Quarto, so nothing restores the chapters: run "
              "`python -m creval.book.prerender --restore` when done", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
