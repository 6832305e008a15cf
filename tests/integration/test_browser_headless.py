"""The item browser in a real browser (issue 43): headless Chromium opens a generated page from a file (no
server, no network), applies the filter and opens the item that the address names, and shows the item's full
transcript and the rows of other tables that share its ids. ``make test`` installs Debian's chromium when it
can; elsewhere this test skips, saying why."""
import re
import shutil
import subprocess

import pytest

from creval.book.browse import study_payload, write_page

pytestmark = pytest.mark.integration

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--virtual-time-budget=5000"]


def browser() -> str:
    found = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
    if found is None:
        pytest.skip("no headless browser: install Debian's chromium (`apt-get install chromium`; `make test` does "
                    "it as root)")
    return found


def dom(page, address: str, tmp_path) -> str:
    """The page's DOM after its script ran, as headless Chromium dumps it, up to its embedded data."""
    r = subprocess.run([browser(), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                        page.as_uri() + address], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.split('id="creval-data"', 1)[0]          # what is shown, not the data embedded after it


def toy_page(tmp_path):
    verdicts = [{"pair_id": f"p{i}", "model": f"m{i % 2}", "verdict": "yes" if i % 3 else "no",
                 "score": float("nan") if i == 4 else i} for i in range(120)]
    transcripts = [{"pair_id": f"p{i}", "transcript": [{"speaker": "critic", "text": f"turn one of pair {i}"},
                                                       {"speaker": "judge", "text": f"final word on {i}"}]}
                   for i in range(120)]
    payload = study_payload("toy", {"verdicts": (verdicts, None), "transcripts": (transcripts, None)},
                            {"chapter": "../chapters/99-toy.html"})
    return write_page(payload, tmp_path / "browse")


def test_the_browser_lists_pages_filters_and_opens_an_item(tmp_path):
    page = toy_page(tmp_path)
    first = dom(page, "", tmp_path)
    assert "120 of 120 rows of verdicts; page 1 of 3" in first
    assert first.count('data-row="') == 50 and "Exception" not in first and ">NaN<" not in first
    opened = dom(page, "#t=verdicts&f.model=m1&f.verdict=yes&i=7", tmp_path)
    # m1 and yes: odd i not divisible by 3, below 120 -> 40 rows
    assert "40 of 120 rows of verdicts; page 1 of 1" in opened
    assert 'id="open-item"' in opened and "verdicts #7" in opened
    assert "turn one of pair 7" in opened and "final word on 7" in opened      # its transcript, from the other table
    assert "turn one of pair 8" not in opened
    nan_row = dom(page, "#t=verdicts&i=4", tmp_path)
    assert "not recorded" in nan_row and ">NaN<" not in nan_row


def test_an_item_shows_its_samples_by_cluster_and_only_the_rows_of_its_own_model(tmp_path):
    problems = [{"problem_id": "q1", "model": m, "solution": f"the solution of {m}"} for m in ("a", "b")]
    steps = [{"problem_id": "q1", "model": "a", "step_index": 0, "cluster_ids": [0, 1, 0],
              "samples": [{"text": "tie the rope"}, {"text": "use the magnet"}, {"text": "knot the rope"}]}]
    page = write_page(study_payload("steps", {"steps": (steps, None), "problems": (problems, None)}),
                      tmp_path / "browse")
    shown = dom(page, "#t=steps&i=0", tmp_path)
    assert "samples by cluster (2)" in shown
    cluster0 = shown.split("cluster 0", 1)[1].split("cluster 1", 1)[0]
    assert "tie the rope" in cluster0 and "knot the rope" in cluster0 and "use the magnet" not in cluster0
    assert "the solution of a" in shown and "the solution of b" not in shown      # matched on id and model


def test_the_list_sorts_by_a_clicked_column_rounds_its_numbers_and_an_item_leads_with_its_verdict(tmp_path):
    rows = [{"pair_id": f"p{i}", "text": "an answer " * 30, "verdict": "yes" if i % 3 else "no",
             "human_label": i % 2, "score": None if i == 4 else i / 7} for i in range(60)]
    talk = [{"pair_id": f"p{i}", "transcript": [{"speaker": "critic", "text": f"a long turn of pair {i} " * 50}]}
            for i in range(60)]
    page = write_page(study_payload("sorted", {"verdicts": (rows, None), "transcripts": (talk, None)}),
                      tmp_path / "browse")
    shown = dom(page, "#t=verdicts&s=-score", tmp_path)
    order = [int(r) for r in re.findall(r'data-row="(\d+)"', shown)]
    assert order[:3] == [59, 58, 57] and len(order) == 50          # descending score, page one of two
    assert ">8.429<" in shown and ">8.42857" not in shown          # 59/7 rounded in the cell (whole on hover)
    head = shown.split("<thead>", 1)[1].split("</thead>", 1)[0]
    assert head.index(">pair_id<") < head.index(">verdict<") < head.index(">human_label<") < head.index(">text<")
    ascending = [int(r) for r in re.findall(r'data-row="(\d+)"', dom(page, "#t=verdicts&s=score&p=1", tmp_path))]
    assert ascending[-1] == 4                                        # the missing score sorts last
    item = dom(page, "#t=verdicts&i=5", tmp_path).split('id="open-item"', 1)[1]
    assert item.index(">verdict<") < item.index(">human_label<") < item.index("an answer an answer")
    assert item.index("an answer an answer") < item.index("a long turn of pair 5")   # the transcript comes last
