"""A Confederacy of Models (Gómez-Rodríguez and Williams, Findings of EMNLP 2023; ``komoku/confederacy-of-models``,
CC BY-SA 4.0): 65 stories on one prompt, by 12 LLMs and by people (5 each), each scored 1-10 on ten rubric items
(Creativity among them) by two raters.

Files (env ``CREVAL_CONFEDERACY_DIR``, staged ``../shared/data/confederacy_of_models``):

- ``rating/RatersSheet-WithResults.xlsx``, first sheet: a header row naming the rubric items in blocks (one
  ``Description`` column, ten items, a ``Total``), one block per rater slot and a last block of ``AVERAGES``; one
  row per story below it (``Story ID`` = the anonymized id, the author, the story's number, ``Group k`` on the
  first row of each rating group of 13 stories). The two rater blocks are the two raters of each group (who
  they are is not released; a rater here is ``group<k>-rater<slot>``). The averages block is not read: the
  mean is computed from the raters' scores.
- ``anonymization/mapping-grouped.csv``: original file name -> anonymized file name;
- ``corpus-full/<original file name>``: the stories, plain text (the people's in Windows-1252, the models' in
  UTF-8).

Ids: ``confederacy-<anonymized id>`` (:func:`story_id`). The independent unit (:data:`UNIT`) is the author: a
model's five stories come from one model, the people's from five writers on one brief. The upstream README
says 5x13 LLM stories plus 5 by people, but the corpus and the sheet hold 65 stories: 12 LLMs and people,
5 each. A staged or given copy is checked file by file against :data:`PINS` (the download, from the pinned
commit, is checked the same way). The bundled sample (``data/samples/confederacy/``, the sheet as a CSV grid)
holds twelve short stories on another prompt and ratings we wrote ourselves: it only lets the code run.
"""
from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path

from creval.core.errors import CrevalError
from creval.core.io import read_csv_rows
from creval.datasets.base import Dataset, Remote, Source, check_pins, file_of, resolve

_RAW = "https://raw.githubusercontent.com/komoku/confederacy-of-models/23fd86df9fd90f242455150dbe3ad4222f94aff9"
PINS = (
    ("rating/RatersSheet-WithResults.xlsx", "fe4ece15ecb05d72aef42d850f7fd1478f4761c6cdf5a82112c0ab56e93b2ebe"),
    ("anonymization/mapping-grouped.csv", "d800f77724d9dd1d68b38647217778cb511295fddccaad7f53dd7ed4f084f493"),
    ("corpus-full/OA_SFT_Llama_30B_6-1.txt", "eddf32365b5e5ff87310d5bb54266831be7223f07537ab0203bfb7851f2d87eb"),
    ("corpus-full/OA_SFT_Llama_30B_6-2.txt", "08f1b06fafa23336d8f738ba082520ddec306f5e2493c600561b23f2d3dc759c"),
    ("corpus-full/OA_SFT_Llama_30B_6-3.txt", "5eef61c755dd880462e30bac40fc330e351a564c0e352acf29fb2af92a04533c"),
    ("corpus-full/OA_SFT_Llama_30B_6-4.txt", "6bafffbda66df58221d4190d8c98620fb57916d540f7504e2e4e81b3d03e95bd"),
    ("corpus-full/OA_SFT_Llama_30B_6-5.txt", "ccc103d71fab6466cb3d7624e807d1b931d6d20eac557e97297d49cedbb7c1a9"),
    ("corpus-full/alpaca-13b-2023-04-07-temp07-1.txt",
     "8b4081cfcb834e697ab12553e8b57878d5bf79f543a6ed9aefd1c2f01aafcf86"),
    ("corpus-full/alpaca-13b-2023-04-07-temp07-2.txt",
     "53548e0f5cbb759d7dfdb49effea5b33c9987f05a09d4cbd8974fac5ffd8d81a"),
    ("corpus-full/alpaca-13b-2023-04-07-temp07-3.txt",
     "d65e34e819fd90466bfdf42bb0ba9f48c9375affe0de6fa016abc0e021d64bcd"),
    ("corpus-full/alpaca-13b-2023-04-07-temp07-4.txt",
     "ac9126742e9ebf5dd3e27582f58ec4d04b89dd602aa396fc20f1d5131633a4ce"),
    ("corpus-full/alpaca-13b-2023-04-07-temp07-5.txt",
     "b3ba03c26e62a90349e7cc83c75b3208fc3e121a75ec3b9f1fd7589c8045b8d3"),
    ("corpus-full/bard-2023-04-11-1.txt", "d821c194547f1639d549f9617618ba00407d71a867fc82b560873b5a0b8cae20"),
    ("corpus-full/bard-2023-04-11-2.txt", "25432346201ce63b10356d1bc300330653b5b6fdced724c2a1124acb5f94f89b"),
    ("corpus-full/bard-2023-04-11-3.txt", "0523e09fe8357cb14523fb862ec6987a064ce3f7a48b485eef321d29b695325f"),
    ("corpus-full/bard-2023-04-11-4.txt", "8b38f034bff1b88c687664adf051f8aa9bf270a13c0b1dea03159eb401d012cf"),
    ("corpus-full/bard-2023-04-11-5.txt", "911a704a1f3aaeb49bd1ea1b9780806fee30232bb98444e735b1cbabc357aaf9"),
    ("corpus-full/bing-creative-2023-04-07-1.txt", "e3d761645195a97975ac27dfee5de12c43e10e79ed033b3613598b03f3047fab"),
    ("corpus-full/bing-creative-2023-04-11-2.txt", "b7c4959e2c5b28659989520ce0fc21eab36d8a7a53bbca1e1050e5e4c1b0f1cc"),
    ("corpus-full/bing-creative-2023-04-11-3.txt", "64f74115327df09c9876565dd30819517259b9a830edb4f0998dfae06b9102ce"),
    ("corpus-full/bing-creative-2023-04-11-4.txt", "177ae2a27268e56ab8962fe42e18fc96bc5d2079faaac40a2cb9ab3611c1e23d"),
    ("corpus-full/bing-creative-2023-04-11-5.txt", "b5c19b06a053430ed2704434d37a68a8d29d6d5e20b219c25a7b1a48b30ea7d4"),
    ("corpus-full/chatgpt-free-mar23version-2023-04-11-1.txt",
     "de56fc04cef80bedd468be104d1476648bc6e1cfb3d9b260acfdf3843162820a"),
    ("corpus-full/chatgpt-free-mar23version-2023-04-11-2.txt",
     "e219b8e4d458b436168dc0f672d7a2c6301424181d6c56f0a32349b77f5a966f"),
    ("corpus-full/chatgpt-free-mar23version-2023-04-11-3.txt",
     "1dab9cc2982060b7121e7035aaf9ca90706982a21a3f89fc8013432348c7dd4d"),
    ("corpus-full/chatgpt-free-mar23version-2023-04-11-4.txt",
     "606f642080aa209b7252c188909e77d0e18ac816d58cb6bd07618d153f20ff86"),
    ("corpus-full/chatgpt-free-mar23version-2023-04-11-5.txt",
     "96e2890151b3abc5c31063aa9b7ca6630489a78c1a2eae009c3e43b6e2f1480a"),
    ("corpus-full/chatgpt-gpt4-mar23version-2023-04-14-1.txt",
     "48376db88a0207e1ea2ced49713cfdec1548b42156b2d721a1764e7e4b063dfc"),
    ("corpus-full/chatgpt-gpt4-mar23version-2023-04-14-2.txt",
     "70f3af37765b554a171ab153a82b6c69e1c6573ea64d8fe1e6a4a5485d98a47d"),
    ("corpus-full/chatgpt-gpt4-mar23version-2023-04-14-3.txt",
     "d8836c0da6c5d85efab778018b1be431fe56918c2b398d9e7fcd9881233cc88e"),
    ("corpus-full/chatgpt-gpt4-mar23version-2023-04-14-4.txt",
     "3ada6aa52b7b90b3fa0138f6b424be9f7fd254a93c928069397375f086af5759"),
    ("corpus-full/chatgpt-gpt4-mar23version-2023-04-14-5.txt",
     "0883ce9b31e1216fbcaa4975013680215d9e09139d34f20c346975e22cf0984d"),
    ("corpus-full/claude12-2023-04-04-1.txt", "b5190796c0adfb63c104289c1e499ef566b56a0abc5f5011c22b7652fa9f32b8"),
    ("corpus-full/claude12-2023-04-04-2.txt", "49b482b48aeb47ebb8f22b8496e5046dd3b6b66682e8114373bec178cf33de28"),
    ("corpus-full/claude12-2023-04-04-3.txt", "dea9ae3523d4b261d612a488832dff1102ff20638dc8b12fef4ad2c7a70f8d99"),
    ("corpus-full/claude12-2023-04-04-4.txt", "3e34e146b4fb8fbef4b67fc099b0ad840609b9a5e5db9831dc27e885bfbd5183"),
    ("corpus-full/claude12-2023-04-04-5.txt", "0eb593d717fd12a31a791d52c6727be50091463e67ef2cbf33f99720d06694fe"),
    ("corpus-full/dolly-v2-12b-2023-04-14-1.txt", "fb7c864f114eb4153761aafdef4b5cad60aae20a96e70755fad7d8618827a0ba"),
    ("corpus-full/dolly-v2-12b-2023-04-14-2.txt", "50b3e825186b0a57a4960c472a9478ff2241e619ea346ec3d520846c78325a67"),
    ("corpus-full/dolly-v2-12b-2023-04-14-3.txt", "230a002bf2068c17e9dca5deddcc416ccad4910e9def08952c37e5552eec456b"),
    ("corpus-full/dolly-v2-12b-2023-04-14-4.txt", "96af5e27ace4b6087c278e425bc9277d6b555dd561e6115947c4a277869f0c06"),
    ("corpus-full/dolly-v2-12b-2023-04-14-5.txt", "2623f3d6ac41e40e2ad264372a51f6a787f0700748024add0a9bb1b9415974d0"),
    ("corpus-full/gpt4all-j-2023-04-14-1.txt", "fb252fc29802e95c2e7af6cb40106b51b8da1aa08975a42021994a855b551bfa"),
    ("corpus-full/gpt4all-j-2023-04-14-2.txt", "1edbcc1075c89dde36a7eeecf9082956de9ab218aa800924b85ef378b98b414b"),
    ("corpus-full/gpt4all-j-2023-04-14-3.txt", "45f7644ff48ec77845a3c6c6d0afde53ee163c7cdeabf1799ebe5c7e2084e8b1"),
    ("corpus-full/gpt4all-j-2023-04-14-4.txt", "81b162b08ebb43a01cc62eb5679e80f8123a358c7640251947b4b6926febf4ee"),
    ("corpus-full/gpt4all-j-2023-04-14-5.txt", "3912060a67619d8e1fd5dc3cbc0bedaf633ee28fe62e0357494e8bba4192c7fc"),
    ("corpus-full/human1-2023-05-12-1.txt", "9c47e75005ecd08b8191def3ff2df68d91696ca584c5da922dd4e0581687dc4b"),
    ("corpus-full/human2-2023-05-12-2.txt", "676cfcf96261e23b66190a9174418fcaadbba016ebfeff2fcf42ec976057cf97"),
    ("corpus-full/human3-2023-05-12-3.txt", "7e086d1eecd5950e3cbd3334840dd37e48021d005f6608bfd3f27c9de1b3492f"),
    ("corpus-full/human4-2023-05-12-4.txt", "1d77be525fc6a3889a4c9abf8c2cd0fc83aa3aceb2d1fe4fb88382b93a61fa7a"),
    ("corpus-full/human5-2023-05-12-5.txt", "73b7cda31fbd35c97bfcc2da1ba544cd77540279bded5804ea49fac0366eeb41"),
    ("corpus-full/koala-13b-2023-04-07-temp07-1.txt",
     "28646f5bfce936abbd522f0db27c6c383a399cc296333ccfda733c0b43875455"),
    ("corpus-full/koala-13b-2023-04-07-temp07-2.txt",
     "69bacade7964d20c85ef70ed08820a7e15830c4cd0c4ac3c91a94d0ba2ca7a9f"),
    ("corpus-full/koala-13b-2023-04-07-temp07-3.txt",
     "a7e255ce7d8240b140c36e36db6ad8b56539232bd9fa615d7b31d181b9eb743f"),
    ("corpus-full/koala-13b-2023-04-07-temp07-4.txt",
     "e79295c797271a635bd269a34a45d4c3bcb0bfe562eefa2bc41b9464e3d78294"),
    ("corpus-full/koala-13b-2023-04-07-temp07-5.txt",
     "838da2eb79e3b90c629c023e31e4fc9656a12957b0d9df34872d8dca2db90e11"),
    ("corpus-full/stablelm-tuned-alpha-7b-2023-04-20-1.txt",
     "387b320cff073d2f3c4e5265561c2d2ce7cab7fd8d57d4e88abeae9a8b06ac7a"),
    ("corpus-full/stablelm-tuned-alpha-7b-2023-04-20-2.txt",
     "5cb364492a961691601a394965763d1d54ecf7b9a73ad70c0dc35dd62c6a5329"),
    ("corpus-full/stablelm-tuned-alpha-7b-2023-04-20-3.txt",
     "da578a927fe7927a39a36f0e12f14fc5c7d475ac6eb1726172949c9b120a9d8f"),
    ("corpus-full/stablelm-tuned-alpha-7b-2023-04-20-4.txt",
     "01ffce218364321872f6fc808aed690d46cef6031bd35a30d455419bb5239c1b"),
    ("corpus-full/stablelm-tuned-alpha-7b-2023-04-20-5.txt",
     "51c9feab4ba5c5bf79681aaf6b3c8ef2888d1da2ce908078186a7a010edbdb18"),
    ("corpus-full/vicuna-13b-2023-04-07-temp07-1.txt",
     "7371d79f0711ae9862df75d6fb34e49fb0302270c8fb80f9a676187484effd09"),
    ("corpus-full/vicuna-13b-2023-04-07-temp07-2.txt",
     "2eabf0df99cab6ee9d212e7d3f851e1d32cc6b268630afef25a746c2d2cab688"),
    ("corpus-full/vicuna-13b-2023-04-07-temp07-3.txt",
     "ffecaff46c6a63bd643261f0921af7413c78bc60a8fc3e33e722d8edda566520"),
    ("corpus-full/vicuna-13b-2023-04-07-temp07-4.txt",
     "a708d8a2f81a1fc81f2478bebc3d47c728dc7b2f0a8a57726538c276a56eede6"),
    ("corpus-full/vicuna-13b-2023-04-07-temp07-5.txt",
     "e837c324c6e7b2721ed107e116fb2c1a327d8c9ec9590b30539451278d82ac0f"),
)
"""Every file read, as upstream has it at the pinned commit, with its sha256."""

DATASET = Dataset(
    name="confederacy", env="CREVAL_CONFEDERACY_DIR", shared="confederacy_of_models",
    files={"ratings": ("rating/RatersSheet-WithResults.xlsx", "rating/RatersSheet-WithResults.csv"),
           "mapping": ("anonymization/mapping-grouped.csv",)},
    required=("ratings", "mapping"),
    remotes=tuple(Remote(f"{_RAW}/{rel}", sha, rel) for rel, sha in PINS),
    how="set CREVAL_CONFEDERACY_DIR to a folder holding rating/RatersSheet-WithResults.xlsx, "
        "anonymization/mapping-grouped.csv and corpus-full/ (komoku/confederacy-of-models), "
        "or unset it to use the fallbacks")

ITEMS = {"Readability": "readability", "Narrative elts.": "narrative", "Structural elts.": "structure",
         "Plot logic": "plot_logic", "Creativity": "creativity", "JKT style": "style", "Epic genre": "epic_genre",
         "Combat": "combat", "Acc. characters": "characters", "Humor": "humor"}
"""The sheet's rubric items -> the names used here."""
PERSON = "human"                 # the sheet's author name of the people's stories
UNIT = "author"
UNIT_WHY = ("a model's five stories share its weights and habits (and the people's five share one brief and one "
            "recruitment), so stories of one author are not independent of one another; authors are.")


@dataclass(frozen=True)
class Story:
    """One rated story."""
    story_id: str                # confederacy-<anonymized id>
    author: str                  # the model's name in the sheet, or "human"
    kind: str                    # "person" or "model"
    number: int                  # 1-5 among its author's stories
    rating_group: int            # the group of stories one pair of raters scored
    file: str                    # corpus-full/<original file name>
    text: str


@dataclass(frozen=True)
class Rating:
    """One rater's scores of one story: the ten items (NaN where blank) and the total."""
    story_id: str
    rater: str                   # group<k>-rater<slot>
    slot: int
    scores: dict[str, float]     # ITEMS' names -> 0-10
    total: float


def source(given: str | Path | None = None, allow_download: bool = False) -> Source:
    """Where the Confederacy data is read from (see :func:`creval.datasets.base.resolve`)."""
    return resolve(DATASET, given, allow_download=allow_download)


def story_id(anonymized) -> str:
    """The one story id: ``confederacy-<anonymized id>`` (9189 and "9189" give the same)."""
    if isinstance(anonymized, float) and anonymized.is_integer():
        anonymized = int(anonymized)
    return f"confederacy-{str(anonymized).strip().removesuffix('.txt')}"


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def clean(raw: bytes | str) -> str:
    """The one story cleaner: bytes decoded as UTF-8, else Windows-1252 (the people's files); typographic quotes
    as plain ones (so the encoding cannot tell people from models); no ``\\r``; at most one blank line."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raw = raw.decode("cp1252", errors="replace")
    t = raw.translate(_QUOTES).replace("\r", "")
    t = "\n".join(line.rstrip() for line in t.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", t).strip()


def _number(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _grid(f: Path) -> list[list]:
    """The cells of the sheet (xlsx: its first sheet; csv: the same grid), row by row."""
    if f.suffix == ".csv":
        try:
            with open(f, encoding="utf-8", newline="") as fh:
                return [list(r) for r in csv.reader(fh)]
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            raise CrevalError(f"cannot read dataset file {f}: {e}", "repair or replace the file") from None
    try:
        import openpyxl
        wb = openpyxl.load_workbook(f, read_only=True, data_only=True)
        rows = [list(r) for r in wb.worksheets[0].iter_rows(values_only=True)]
        wb.close()
    except Exception as e:   # openpyxl raises many types for a corrupt file
        raise CrevalError(f"dataset file {f} is not a readable xlsx workbook: {e}", "replace the file") from None
    return rows


def _text(v) -> str:
    return "" if v is None else str(int(v) if isinstance(v, float) and v.is_integer() else v).strip()


def _blocks(f: Path, grid: list[list]) -> tuple[int, list[tuple[int, dict[str, int], int | None]]]:
    """The header row's index and each rater block: ``(slot, {item: column}, total column)``; the block under
    an ``AVERAGES`` label is left out."""
    for h, row in enumerate(grid):
        cells = [_text(c) for c in row]
        starts = [j for j, c in enumerate(cells) if c == "Description"]
        if not starts or "Creativity" not in cells:
            continue
        out = []
        for b, j in enumerate(starts):
            end = starts[b + 1] if b + 1 < len(starts) else len(cells)
            above = {_text(grid[i][j]).upper() for i in range(max(0, h - 3), h) if j < len(grid[i])}
            if "AVERAGES" in above:
                continue
            cols = {ITEMS[c]: k for k, c in enumerate(cells[j:end], start=j) if c in ITEMS}
            total = next((k for k, c in enumerate(cells[j:end], start=j) if c == "Total"), None)
            if len(cols) != len(ITEMS):
                raise CrevalError(f"{f}: the rater block at column {j + 1} names {len(cols)} of the ten rubric "
                                  "items", "use the sheet of komoku/confederacy-of-models, rating/")
            out.append((len(out) + 1, cols, total))
        if out:
            return h, out
    raise CrevalError(f"{f}: no header row with the rubric items (Description ... Creativity ... Total)",
                      "use rating/RatersSheet-WithResults.xlsx of komoku/confederacy-of-models")


def load_ratings(given: str | Path | None = None) -> tuple[list[Rating], dict[str, dict], Source]:
    """Every rater's scores (:class:`Rating`), each story's sheet fields ``{story_id: {author, number,
    rating_group, anonymized}}``, and the source."""
    src = source(given, allow_download=True)
    check_pins(DATASET, src)
    f = file_of(DATASET, src, "ratings")
    grid = _grid(f)
    h, blocks = _blocks(f, grid)
    ratings, sheet, group = [], {}, 0
    for row in grid[h + 1:]:
        cells = list(row) + [None] * 4
        anon, author = _text(cells[0]), _text(cells[1])
        m = re.search(r"(\d+)", _text(cells[3]))
        if m and author:
            group = int(m.group(1))
        if not anon or not author or anon.lower() in ("example", "average", "story id"):
            continue
        sid = story_id(anon)
        sheet[sid] = {"author": author, "number": int(_number(cells[2])) if math.isfinite(_number(cells[2])) else 0,
                      "rating_group": group, "anonymized": anon}
        for slot, cols, total_col in blocks:
            scores = {k: _number(row[j]) if j < len(row) else math.nan for k, j in cols.items()}
            total = _number(row[total_col]) if total_col is not None and total_col < len(row) else math.nan
            if not math.isfinite(total) and all(math.isfinite(v) for v in scores.values()):
                total = float(sum(scores.values()))
            ratings.append(Rating(sid, f"group{group}-rater{slot}", slot, scores, total))
    if not sheet:
        raise CrevalError(f"{f}: no story rows below the header", "use rating/RatersSheet-WithResults.xlsx")
    return ratings, sheet, src


def load(given: str | Path | None = None) -> tuple[list[Story], list[Rating], Source]:
    """Every rated story with its text (:class:`Story`, in the sheet's order), every rater's scores and the
    source. A story whose file is missing is a :class:`CrevalError` naming it."""
    ratings, sheet, src = load_ratings(given)
    mf = file_of(DATASET, src, "mapping")
    rows = read_csv_rows(mf)
    if rows and not {"Original", "Anonymized"} <= set(rows[0]):
        raise CrevalError(f"{mf}: expected the columns Original, Anonymized", f"found {sorted(rows[0])}")
    original = {story_id(r["Anonymized"]): r["Original"].strip() for r in rows}
    out = []
    for sid, s in sheet.items():
        if sid not in original:
            raise CrevalError(f"{mf}: no file name for story {s['anonymized']}",
                              "use anonymization/mapping-grouped.csv")
        rel = f"corpus-full/{original[sid]}"
        f = src.path / rel
        if not f.exists():
            raise CrevalError(f"confederacy: {f} is missing (story {s['anonymized']})", DATASET.how)
        out.append(Story(sid, s["author"], "person" if s["author"] == PERSON else "model", s["number"],
                         s["rating_group"], rel, clean(f.read_bytes())))
    return out, ratings, src
