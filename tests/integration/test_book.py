"""The book end to end: every study run on the smoke profile with the real local model, then every chapter
executed by papermill (reading the records only) and rendered to offline HTML; then the studies again, warm,
with no model call nor cache lookup at all; then Quarto's pre-render step, real this time, on a copy of the
project."""
import json
import re
import shutil

import pytest

from creval.book import pagecheck
from creval.book import prerender as P
from creval.book.build import build_book
from creval.book.execute import book_structure
from creval.book.params import effective_params, load_params
from creval.book.studies import run_studies
from creval.core.paths import REPO
from creval.studies.registry import STUDIES

pytestmark = pytest.mark.integration


def test_book_builds_then_rebuilds_from_cache(tmp_path):
    # the session's call cache (tests/conftest.py), not a private one: the contract tests after this one read the
    # same smoke-profile calls from it instead of paying for them again (CI's time budget)
    params = load_params(REPO / "params/smoke.yaml", [f"run_root={tmp_path / 'runs'}"])
    cold = build_book(params, tmp_path / "book", render="offline", progress=False)
    assert [c["error"] for c in cold["chapters"]] == [None] * len(cold["chapters"]), cold["chapters"]
    assert [s["error"] for s in cold["studies"]] == [None] * len(cold["studies"]), cold["studies"]
    assert [s["study"] for s in cold["studies"]] == list(STUDIES)        # every study, upstream first
    assert cold["usage"]["total"]["calls_made"] + cold["usage"]["total"]["cache_hits"] > 0   # the models were asked
    for ch in cold["chapters"]:                     # a page only reads records: no call, not even a cached one
        assert ch["usage"]["calls_made"] == ch["usage"]["cache_hits"] == 0, ch
    site = tmp_path / "book" / "site"
    index = (site / "index.html").read_text()
    for ch in cold["chapters"]:
        page = site / ch["chapter"].replace(".ipynb", ".html")
        html = page.read_text()
        assert page.name in index or page.name in html                     # linked from the table of contents
        assert "Traceback" not in html                                      # no cell failed
        assert not re.search(r'<script[^>]+src="https?://', html)          # offline: no script from the network
        assert 'import("https://' not in html
    # the parameters appear once per page, with the values the chapter ran with
    for ch in cold["chapters"]:
        cells = json.loads((tmp_path / "book" / ch["chapter"]).read_text())["cells"]
        tags = [c.get("metadata", {}).get("tags", []) for c in cells]
        assert sum("parameters" in t for t in tags) == 1 and not any("injected-parameters" in t for t in tags)
        own = "".join(next(c["source"] for c, t in zip(cells, tags) if "parameters" in t))
        assert f'run_root = "{tmp_path / "runs"}"' in own and "seed = 0" in own, own
    # plotly.js is embedded once in a page that draws a figure (a figure of too few points is a sentence: issue 53)
    drawn = 0
    for ch in cold["chapters"]:
        html = (site / ch["chapter"].replace(".ipynb", ".html")).read_text()
        figures = html.count('class="plotly-graph-div"')
        drawn += figures
        assert html.count("window._crevalDefine = window.define") == (1 if figures else 0), ch["chapter"]
    assert drawn > 0
    # what a reader meets, in a real browser: no overflow, no printed Python, no heading made of data, every
    # figure with titled axes and a plot area of at least half its width (issue 53)
    if pagecheck.browser():
        assert pagecheck.check_site(site) == {}
    # every worded row of the card rests on an interval that varies (issue 66: never a zero-width one read)
    cards = list((tmp_path / "runs").glob("reportcard/*/card.jsonl"))
    assert cards, "no card written"
    rows = [json.loads(x) for x in cards[0].read_text().splitlines() if x.strip()]
    for r in rows:
        if r["tracking"] != "not testable here":
            at_bound = r["value"] in (-1.0, 0.0, 1.0)         # perfect in every resample: agreement, not frozen
            assert r["hi"] > r["lo"] or at_bound, (r["measure"], r["human data"])
    # the warm rebuild's studies: read back from their finished run folders, nothing recomputed, nothing even looked
    # up in the cache (its chapters are not executed again: the cold ones above were shown to make no call)
    warm = run_studies(effective_params(params))
    assert [s["study"] for s in warm] == list(STUDIES) and [s["error"] for s in warm] == [None] * len(STUDIES)
    assert all(s["usage"]["calls_made"] == s["usage"]["cache_hits"] == 0 for s in warm), warm
    prerender_stages_the_executed_chapter(tmp_path, params)


def prerender_stages_the_executed_chapter(tmp_path, params):
    """What `quarto render chapters/01-apparatus.ipynb` runs before it reads the chapter: the chapter executed
    for real (its study read back) and written where Quarto reads it; then put back as committed."""
    root, ch = tmp_path / "project", "chapters/01-apparatus.ipynb"
    (root / "chapters").mkdir(parents=True)
    for f in ["_quarto.yml", "index.qmd", *(f for _, f in book_structure() if f.endswith(".ipynb"))]:
        shutil.copyfile(REPO / f, root / f)
    committed = (root / ch).read_bytes()
    env = {"QUARTO_PROJECT_OUTPUT_DIR": "_book", "QUARTO_PROJECT_INPUT_FILES": ch}
    assert P.prerender(env, root, params, out=tmp_path / "quarto-build", wait_pid=None) == 0
    cells = json.loads((root / ch).read_text())["cells"]
    shown = [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert shown and not [o for o in shown if o["output_type"] == "error"]       # executed, nothing failed
    assert json.loads((tmp_path / "quarto-build" / "book-manifest.json").read_text())["usage"]["total"][
        "calls_made"] == 0                                                         # the records were read back
    assert P.restore(root, root / P.STAGE) == [ch] and (root / ch).read_bytes() == committed
