"""The card `creval grade` writes opens in a real browser (issue 42): headless Chromium loads it from a file,
with no server and no network, and shows one row per measure with its word. Skips, saying why, where no
browser is installed (`make test` installs Debian's chromium when it can)."""
import shutil
import subprocess

import pytest

from creval.grade.card import write_card
from creval.grade.grading import SAMPLE, GradeOptions, grade_file
from creval.measures.stats.tracking import word_label

pytestmark = pytest.mark.integration
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def test_the_card_opens_in_headless_chromium(tmp_path):
    found = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    if found is None:
        pytest.skip("no headless browser: install Debian's chromium (`apt-get install chromium`)")
    result = grade_file(SAMPLE, GradeOptions(labels="rating", id="id", author="author", measures=["ci", "lexical"],
                                             L=(2, 3), n_boot=200))
    page = write_card(result, tmp_path / "card", str(SAMPLE))["html"]        # an absolute path: only its name shows
    r = subprocess.run([found, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000",
                        "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    assert "<title>creval grade: stories.csv</title>" in dom
    assert dom.count("<tr>") == 1 + len(result["card"]) == 6               # the header and one row per measure
    assert all(f">{word_label(row)}</td>" in dom or f">{word_label(row)}, borderline</td>" in dom
               for row in result["card"])
    assert str(SAMPLE.parent) not in dom.split("<body")[0]                # no absolute path in the head
    # the forest plot rendered: plotly drew its SVG, with both panels' axis titles and a point per testable row
    assert 'class="main-svg"' in dom and "lead over the strongest baseline" in dom
    assert dom.count('class="point"') >= 2 * len([r for r in result["card"] if r["word"] != "not testable here"])
