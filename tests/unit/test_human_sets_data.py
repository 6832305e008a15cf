"""The LAMP and Confederacy loaders (issue 54): the staged data when it is beside the checkout, the hand-written
sample otherwise, a download from a local server, and one clear error for a pinned file that changed or is
missing. No network."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import shutil

import pytest

from creval.core import paths
from creval.core.errors import CrevalError
from creval.datasets import base, confederacy, lamp

STAGED = paths.REPO.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """No env vars, no ../shared, an empty data home, offline; download failures forgotten."""
    for ds in (lamp.DATASET, confederacy.DATASET):
        monkeypatch.delenv(ds.env, raising=False)
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    base.FAILURES.reset()
    yield
    base.FAILURES.reset()


def staged(monkeypatch, mod):
    monkeypatch.delenv("CREVAL_SHARED_DATA")
    if mod.source().kind != "shared":
        pytest.skip(f"{mod.DATASET.shared} not staged beside the checkout")


def pinned_to(monkeypatch, mod, folder):
    """Pin ``mod``'s dataset to the files of ``folder`` as they are now (a stand-in for the real release)."""
    rels = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    remotes = tuple(base.Remote(f"http://unused/{r}", hashlib.sha256((folder / r).read_bytes()).hexdigest(), r)
                    for r in rels)
    monkeypatch.setattr(mod, "DATASET", dataclasses.replace(mod.DATASET, remotes=remotes))
    return rels


# -- the sample ------------------------------------------------------------------------------------------
def test_lamp_sample_is_the_last_fallback():
    items, rankings, src = lamp.load()
    assert src.kind == "sample" and src.path == paths.samples_dir() / "lamp"
    assert len(items) == 6 and len(rankings) == 18 and {r.writer for r in rankings} == {"ana", "ben", "cleo"}
    first = next(i for i in items if i.item_id == "lamp-b1-1")
    assert first.unit == "lamp-sample_1" and first.source == "model-x" and set(first.texts) == set(lamp.VERSIONS)
    assert first.texts[lamp.WRITER_EDIT].startswith("Mara was folding the rye")
    # ana put the writer's edit first, then the AI edit, then the raw paragraph on item 1 (HAR in the sample)
    ana = next(r for r in rankings if r.writer == "ana" and r.item_id == "lamp-b1-1")
    assert ana.ranks == {lamp.WRITER_EDIT: 1, lamp.AI_EDIT: 2, lamp.RAW: 3}
    assert all(sorted(r.ranks.values()) == [1, 2, 3] for r in rankings)
    assert lamp.UNIT == "instruction" and lamp.UNIT_WHY


def test_confederacy_sample_is_the_last_fallback():
    stories, ratings, src = confederacy.load()
    assert src.kind == "sample" and len(stories) == 12 and len(ratings) == 24
    assert {s.kind for s in stories} == {"person", "model"} and len({s.author for s in stories}) == 6
    k = next(s for s in stories if s.story_id == "confederacy-K2P7")
    assert k.author == "human" and k.kind == "person" and k.rating_group == 1 and k.file.endswith("human1-sample-1.txt")
    assert k.text.startswith("Postmaster Edgar Pim")
    r = [x for x in ratings if x.story_id == "confederacy-K2P7"]
    assert [x.rater for x in r] == ["group1-rater1", "group1-rater2"]
    assert r[0].scores["creativity"] == 7 and r[0].total == 69 and set(r[0].scores) == set(confederacy.ITEMS.values())
    assert confederacy.UNIT == "author" and confederacy.UNIT_WHY


def test_cleaners_and_ids():
    assert lamp.clean("It\u2019s \u201cfine\u201d.  \r\n\n\n\nNext ") == "It's \"fine\".\n\nNext"
    assert confederacy.clean(b"It\x92s a \x93bird\x94\r\n") == "It's a \"bird\""
    assert confederacy.clean("caf\u00e9".encode()) == "caf\u00e9"
    assert confederacy.story_id(9189.0) == confederacy.story_id("9189.txt") == "confederacy-9189"
    assert lamp.item_id(3, "7") == "lamp-b3-7" and lamp.unit_id(" gene_batch1_19") == "lamp-gene_batch1_19"


# -- the staged data --------------------------------------------------------------------------------------
def test_lamp_staged(monkeypatch):
    staged(monkeypatch, lamp)
    items, rankings, src = lamp.load()
    assert src.kind == "shared" and len(items) == 201 and len(rankings) == 603
    assert len({i.unit for i in items}) == 200                        # one instruction was shown twice
    assert {r.writer for r in rankings if r.batch == 7} == {"hyo", "stefan", "tuhin"}
    one = next(i for i in items if i.item_id == "lamp-b1-1")
    assert one.unit == "lamp-gene_batch1_19" and one.source == "gpt4o"
    assert one.texts[lamp.WRITER_EDIT].startswith("The politician entered my restaurant")
    cg = next(r for r in rankings if r.item_id == "lamp-b1-1" and r.writer == "cgreer")
    assert cg.ranks == {lamp.WRITER_EDIT: 1, lamp.RAW: 2, lamp.AI_EDIT: 3}
    # the writers prefer the writer's edit to the raw paragraph in most rankings (the paper's finding)
    assert sum(r.ranks[lamp.WRITER_EDIT] < r.ranks[lamp.RAW] for r in rankings) > 0.6 * len(rankings)


def test_confederacy_staged(monkeypatch):
    staged(monkeypatch, confederacy)
    stories, ratings, src = confederacy.load()
    assert src.kind == "shared" and len(stories) == 65 and len(ratings) == 130
    authors = {s.author for s in stories}
    assert len(authors) == 13 and "human" in authors and sum(s.kind == "person" for s in stories) == 5
    assert all(len([s for s in stories if s.author == a]) == 5 for a in authors)
    gpt4 = [r for r in ratings if r.story_id == "confederacy-7UKN"]       # sheet row 13: chatgpt-gpt4, group 1
    assert [(r.scores["creativity"], r.total) for r in gpt4] == [(7, 76), (8, 95)]
    s = next(s for s in stories if s.story_id == "confederacy-7UKN")
    assert s.author == "chatgpt-gpt4" and s.rating_group == 1 and "Ignatius" in s.text and "\r" not in s.text
    assert all("\ufffd" not in s.text and "\u2019" not in s.text for s in stories)
    assert all(math.isfinite(r.total) for r in ratings)


def test_pins_match_the_staged_copies():
    checked = 0
    for mod in (lamp, confederacy):
        for r in mod.DATASET.remotes:
            f = STAGED / mod.DATASET.shared / r.name
            assert r.url.endswith(r.name) and "raw.githubusercontent.com" in r.url and len(r.sha256) == 64
            if f.exists():
                assert hashlib.sha256(f.read_bytes()).hexdigest() == r.sha256, f
                checked += 1
    if not checked:
        pytest.skip("no staged data beside the checkout")


# -- a changed or missing file ------------------------------------------------------------------------------
@pytest.mark.parametrize("mod,rel,other", [
    (lamp, "batch1/ben_rankings.json", "batch1/batch1.json"),
    (confederacy, "corpus-full/parrot-2-sample-2.txt", "rating/RatersSheet-WithResults.csv")])
def test_a_changed_pinned_file_is_one_clear_error(tmp_path, monkeypatch, mod, rel, other):
    copy = tmp_path / mod.DATASET.name
    shutil.copytree(paths.samples_dir() / mod.DATASET.name, copy)
    pinned_to(monkeypatch, mod, copy)
    monkeypatch.setenv(mod.DATASET.env, str(copy))
    loader = mod.load
    assert loader()[-1].kind == "local"                               # unchanged: it loads
    f = copy / rel
    f.write_bytes(f.read_bytes().replace(b"e", b"a", 1))
    with pytest.raises(CrevalError, match=f"{rel}.* has changed: its sha256 is not the pinned") as e:
        loader()
    assert mod.DATASET.env in e.value.fix
    f.unlink()
    with pytest.raises(CrevalError, match=f"{rel} is missing"):
        loader()
    (copy / other).unlink()                                          # a file the folder must hold: named too
    with pytest.raises(CrevalError, match=f"has no {other.rsplit('.', 1)[0]}"):
        loader()


def test_a_changed_staged_file_is_refused(tmp_path, monkeypatch):
    src = STAGED / confederacy.DATASET.shared
    if not src.is_dir():
        pytest.skip("Confederacy not staged beside the checkout")
    copy = tmp_path / "conf"
    shutil.copytree(src, copy)
    monkeypatch.setenv("CREVAL_CONFEDERACY_DIR", str(copy))
    f = copy / "corpus-full" / "bard-2023-04-11-1.txt"
    f.chmod(0o644)
    f.write_bytes(f.read_bytes() + b" ")
    with pytest.raises(CrevalError, match="bard-2023-04-11-1.txt has changed"):
        confederacy.load()


def test_download_from_the_pinned_files(monkeypatch, server):
    www, url = server
    monkeypatch.setenv("CREVAL_OFFLINE", "0")
    shutil.copytree(paths.samples_dir() / "lamp", www / "lamp")
    rels = pinned_to(monkeypatch, lamp, www / "lamp")
    monkeypatch.setattr(lamp, "DATASET", dataclasses.replace(lamp.DATASET, remotes=tuple(
        dataclasses.replace(r, url=f"{url}/lamp/{r.name}") for r in lamp.DATASET.remotes)))
    items, rankings, src = lamp.load()
    assert src.kind == "download" and len(rankings) == 18
    assert sorted(str(p.relative_to(src.path)) for p in src.path.rglob("*") if p.is_file()) == rels


def test_lamp_rankings_match_the_upstream_agreement_map(monkeypatch):
    """Upstream's own summary (``agreement_map.json``: per batch and writer, the versions in rank order as
    1 = writer's edit, 2 = raw, 3 = AI edit) agrees with every ranking the loader read; batch 7's ``tuhin`` files
    are filed there as ``micah`` (SOURCE.md)."""
    staged(monkeypatch, lamp)
    items, rankings, src = lamp.load()
    summary = json.loads((src.path / "agreement_map.json").read_text())
    code = (lamp.WRITER_EDIT, lamp.RAW, lamp.AI_EDIT)
    checked = 0
    for r in rankings:
        writer = "micah" if (r.batch, r.writer) == (7, "tuhin") else r.writer
        listed = summary[f"batch{r.batch}"][writer][int(r.item_id.rsplit("-", 1)[1]) - 1]
        by_rank = sorted(code, key=lambda v: r.ranks[v])
        assert [code.index(v) + 1 for v in by_rank] == listed, (r.item_id, r.writer)
        checked += 1
    assert checked == 603


def test_confederacy_means_match_the_sheets_own_averages(monkeypatch):
    """The sheet's AVERAGES block (not read by the loader) holds each story's mean per item: the means of the
    raters' scores the loader read give the same numbers for Creativity and the total."""
    import openpyxl
    staged(monkeypatch, confederacy)
    stories, ratings, src = confederacy.load()
    ws = openpyxl.load_workbook(src.path / "rating" / "RatersSheet-WithResults.xlsx", data_only=True).worksheets[0]
    head = {c.value: c.column for c in ws[5] if c.value in ("Creativity", "Total")}   # the last block wins
    sheet = {str(row[0].value): (row[head["Creativity"] - 1].value, row[head["Total"] - 1].value)
             for row in ws.iter_rows(min_row=10, max_row=74) if row[0].value is not None}
    assert len(sheet) == 65
    for s in stories:
        mine = [r for r in ratings if r.story_id == s.story_id]
        creativity = sum(r.scores["creativity"] for r in mine) / len(mine)
        total = sum(r.total for r in mine) / len(mine)
        assert (creativity, total) == pytest.approx(sheet[s.story_id.removeprefix("confederacy-")]), s.story_id
