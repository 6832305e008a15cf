"""LAMP preference rankings (Chakrabarty et al., CHI 2025, "Can AI writing be salvaged?";
``salesforce/creativity_eval``, ``Writing_Alignment/preference_ranking/``, BSD-3-Clause): expert writers rank
three versions of a paragraph.

For each literary-fiction instruction an LLM wrote a paragraph (``AI-generated``); a professional writer edited it
(``Human-edited``) and an LLM edited it (``AI-edited``). Three expert writers per batch saw the three versions in a
shuffled order and ranked them 1-3. Files (env ``CREVAL_LAMP_DIR``, staged ``../shared/data/lamp_preferences``), per
batch folder ``batchN/``:

- ``batchN.json``: the batch's items (``id``, ``instruction``, ``source`` = the LLM, ``preedit``, ``postedit``,
  ``AI-edited``, ...) -> the LLM of each item;
- ``<writer>.json``: what one writer saw, per ``instruction_id``: ``id``, ``instruction``, ``responses`` (three
  paragraphs) and ``mapping`` (``Response k`` -> version);
- ``<writer>_rankings.json``: that writer's ``rank_1 .. rank_3`` (each a ``Response k``) per ``instruction_id``.

The texts are the ones the writers saw (``responses``), not the batch file's ``postedit``: in batches 1-5 the
writer-edited paragraph shown differs from ``postedit``. Writers of one batch saw the same texts up to a few
characters; a version's text is taken from the first writer (by name) who saw it.

Ids: an item as shown is ``lamp-b<batch>-<instruction_id>`` (:func:`item_id`); its instruction, the independent
unit (:data:`UNIT`), is ``lamp-<upstream id>`` (one id per instruction; two instructions were shown twice).
Upstream is only reachable through its copy in ``JoeyHou/CreativityPrism`` (commit d62e370), from which the
download takes every file, each checked against its sha256; a staged or given copy is checked the same way
(:func:`creval.datasets.base.check_pins`). The bundled sample (``data/samples/lamp/``) holds six instructions,
paragraphs and rankings we wrote ourselves: it only lets the code run.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from creval.core.errors import CrevalError
from creval.core.io import read_json
from creval.datasets.base import Dataset, Remote, Source, check_pins, resolve

_RAW = ("https://raw.githubusercontent.com/JoeyHou/CreativityPrism/d62e370d873538960dd51b0649b46c665e37fd3c/"
        "data_cleaning/raw_data/ttcw/Writing_Alignment/preference_ranking")
PINS = (
    ("batch1/batch1.json", "abd3072a1a2aeb3a10ddbb0a44a8bcc1f8778850719f57a42cf9df261d600b9b"),
    ("batch1/cgreer.json", "998bd662fcc4b650bec2dbf0c42eabb54bb3fb868a1e74b41de8f5276200fd20"),
    ("batch1/cgreer_rankings.json", "3c759003ee24fb33517a258de0da565432ad9a7a5d5891eb94f1682575224bba"),
    ("batch1/issa.json", "2f8fee5a3a196f82c2cdad25b6b9ea1a41a4be516682644fe3573688ffbd25b6"),
    ("batch1/issa_rankings.json", "138ca724c0514487bb36a8f9da510be49865f1f6114ccb40b5127f37804de3fa"),
    ("batch1/yen.json", "e84d90d6b13e73d29bf45636f71b5ac3a6bc24abe409268f7718890c7db5d08d"),
    ("batch1/yen_rankings.json", "3dffa5b338dbf16cb0cb09150e35d2b82a1c09d76169c15863f6d636f1090cc2"),
    ("batch2/batch2.json", "8a16093092b2b44b4c10027d119b1924c18f8d09d7a0060b8651d44812fadfc5"),
    ("batch2/rachel_lapides.json", "f341106c5c29e1eb4f1020a525a9ad097ea872ef476e7206c96fbaf4212439f0"),
    ("batch2/rachel_lapides_rankings.json", "fb275d12298834422ed4b74af0f33d079ce35827a85e60016161a047a730b042"),
    ("batch2/riley.json", "0d48af3d7271e96dd6d83630eea5cba539bc6159ac088b735f36d2457902e7d7"),
    ("batch2/riley_rankings.json", "33a11d8ce3f318648387ad34bd290a79907f88dd332dbc1ca54cd0ca3eea353b"),
    ("batch2/xiadi.json", "aba92da7751191e8cc524b133bd90761ab5a1133c9dadc64c9cb95134bc42158"),
    ("batch2/xiadi_rankings.json", "c892a83d772af1fbc152c0f0f7f0ff492e23aad353c41268f02d5f245b9625dd"),
    ("batch3/batch3.json", "55cc5f9be9138ba9653118341c882fd253b344b8d40c6f93134ecf5b004c685d"),
    ("batch3/hyo.json", "c3f5e3dd4bd5682984607288615ffaf751515bec1957b2d756fc925b3791984e"),
    ("batch3/hyo_rankings.json", "8e35c1ba5b18d0c254b4df31ae5eaeba5b47f6ad20603d398d6a1d0cf44b9992"),
    ("batch3/imani.json", "c3f5e3dd4bd5682984607288615ffaf751515bec1957b2d756fc925b3791984e"),
    ("batch3/imani_rankings.json", "8fa5451d245b6b54033da7723f1a3528a87720d7870ff3245863d676f4eb65a6"),
    ("batch3/margaret.json", "e95d671ba728d3810a981b02cb5b2a82f69b0aaef9cfdb6b87f95d41afbdf28f"),
    ("batch3/margaret_rankings.json", "1ac6fd97c57dd7300e83cd6493d9a8835c55bf54a626dbc82a9b87bd73fade00"),
    ("batch4/batch4.json", "fb6dcf0b00f5d6db2bd9fdaee579cbbf565113a6e49def62d1b6cbb7a535e35e"),
    ("batch4/cgreer.json", "846877632926e51bfe081a945d081a9ca7280a8f795e142f15f2362bf8cf616c"),
    ("batch4/cgreer_rankings.json", "c024f79f3c3afb12f0c535df7609cca8b5ca81cff2bb941979d869f56849b604"),
    ("batch4/josiah.json", "5cae82d166927bc2628235186cbc1574a7502cad1e1118cd886c5df2ebfeddc2"),
    ("batch4/josiah_rankings.json", "e7669956bb919da60c5e28c1533751518c9d3c4f61cf71e9fb899bf337b66fa9"),
    ("batch4/yen.json", "393fed99a72bd53ca481f2b1ad4c482c5bc34f4246f38a6a5783f2e69fadf415"),
    ("batch4/yen_rankings.json", "2c97652d9954e8e91dec6cecd13246ced417fe8e77903dc38e17698ae09205f0"),
    ("batch5/adeniyiademoroti.json", "24d218d9c010cd945350e288d609ff11c47798746026321715343183a9e9899d"),
    ("batch5/adeniyiademoroti_rankings.json", "24bba972a28f89f654bc18683e2d4ea0b62210f133a3b6a3d82996f1f19ea877"),
    ("batch5/batch5.json", "2a2c553103bcbe0a11dceb8ecf31e737941ec9d2a6ff25430c7bdc28dbb7a143"),
    ("batch5/cgreer.json", "5d150fc0047bcd1e81a82d8f754f2174d8ee9c38958565dc49f372cf118a5d29"),
    ("batch5/cgreer_rankings.json", "bcf78edfce8900d57cc11b1f4708a3ffb03b4121a5615d9f6138c9922f53ef0c"),
    ("batch5/rachel_lapides.json", "6e577325b855d2e7a4282397badb10944f21757c30059cdc6432c8204dfbf36d"),
    ("batch5/rachel_lapides_rankings.json", "61a231f00832f8302e3be9a1e78b2da80e7fd1e8fc95694eab568fa2a8041d55"),
    ("batch6/batch6.json", "5adf2c9fd905c43090408f4dbca7a1719413f45e940f43bdbf94a32d7e67b727"),
    ("batch6/cgreer.json", "5441b13b3fb553979cd53b905885fc43d881c23b42580483e00e176e706f0197"),
    ("batch6/cgreer_rankings.json", "52f8de680f0701fb0d78665f8cca2d4eca0dbd80686e591d62419641570c44e5"),
    ("batch6/josiah.json", "5441b13b3fb553979cd53b905885fc43d881c23b42580483e00e176e706f0197"),
    ("batch6/josiah_rankings.json", "54e3823383245475f1d964458d4209ea61c89a19c7f5d4d67c6091d9b67f4b50"),
    ("batch6/yen.json", "a95da3fcf58e14b3e9ee72b4940e9c0a7d953456854b500cb9d276db4fd3f49e"),
    ("batch6/yen_rankings.json", "2a3ebd358164a54db4a9d195f656132e00e0272d605ff250fa27f32b98896591"),
    ("batch7/batch7.json", "dfb8220565084370c3c6e4695a13665afc94b20087e71d8df93f4bbecfadf251"),
    ("batch7/hyo.json", "454832abd16232ffbb9512b35bd14a02b5a67b1704e076a8ac731043fde88803"),
    ("batch7/hyo_rankings.json", "75907582b64226b0faa97dec19b1a0717effc14ed28a256fe3bbf9a8434717c0"),
    ("batch7/stefan.json", "454832abd16232ffbb9512b35bd14a02b5a67b1704e076a8ac731043fde88803"),
    ("batch7/stefan_rankings.json", "beda1fe92473028dcb17dd6515881b88a72533cf1a3c19186013755e4526f50c"),
    ("batch7/tuhin.json", "454832abd16232ffbb9512b35bd14a02b5a67b1704e076a8ac731043fde88803"),
    ("batch7/tuhin_rankings.json", "772d0adeb189364bdc3e0f3a8f99a3d64edb03e2ee1da01bd1d0cbd3e6199c3b"),
)
"""Every file read, as upstream has it at the pinned commit, with its sha256."""

DATASET = Dataset(
    name="lamp", env="CREVAL_LAMP_DIR", shared="lamp_preferences",
    files={"batch1": ("batch1/batch1.json",)},
    required=("batch1",),
    remotes=tuple(Remote(f"{_RAW}/{rel}", sha, rel) for rel, sha in PINS),
    how="set CREVAL_LAMP_DIR to a folder holding LAMP's preference_ranking files (batch1/ ... batch7/), "
        "or unset it to use the fallbacks")

RAW, WRITER_EDIT, AI_EDIT = "AI-generated", "Human-edited", "AI-edited"
VERSIONS = (RAW, WRITER_EDIT, AI_EDIT)
UNIT = "instruction"
UNIT_WHY = ("the three versions of a paragraph answer one instruction and every writer ranks them together, so "
            "texts and rankings of one instruction are not independent of one another; instructions are.")


@dataclass(frozen=True)
class LampItem:
    """One instruction as shown in one batch: its three versions, as the writers saw them."""
    item_id: str                 # lamp-b<batch>-<instruction_id>
    unit: str                    # lamp-<upstream id>: the instruction
    batch: int
    instruction: str
    source: str | None           # the LLM that wrote the raw paragraph (None where the batch file lacks the item)
    texts: dict[str, str]        # version -> text


@dataclass(frozen=True)
class LampRanking:
    """One writer's ranking of one item's three versions (1 = best)."""
    item_id: str
    unit: str
    batch: int
    writer: str
    ranks: dict[str, int]        # version -> rank


def source(given: str | Path | None = None, allow_download: bool = False) -> Source:
    """Where LAMP is read from (see :func:`creval.datasets.base.resolve`)."""
    return resolve(DATASET, given, allow_download=allow_download)


def item_id(batch: int, instruction_id) -> str:
    """The one id of an item as shown: ``lamp-b<batch>-<instruction_id>``."""
    return f"lamp-b{int(batch)}-{int(instruction_id)}"


def unit_id(upstream_id) -> str:
    """The id of an instruction, the independent unit: ``lamp-<upstream id>``."""
    return f"lamp-{str(upstream_id).strip()}"


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def clean(text) -> str:
    """The one LAMP text cleaner: typographic quotes as plain ones, no ``\\r``, no trailing spaces, at most one
    blank line in a row, stripped."""
    t = str(text or "").translate(_QUOTES).replace("\r", "")
    t = "\n".join(line.rstrip() for line in t.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", t).strip()


def _files(src: Source) -> list[tuple[int, str, Path, Path]]:
    """``(batch, writer, shown file, rankings file)`` of every writer: the pinned files for a real copy, the
    folder's own for the sample."""
    if not src.is_sample:
        rels = [r.name for r in DATASET.remotes if r.name.endswith("_rankings.json")]
    else:
        rels = sorted(str(p.relative_to(src.path)) for p in src.path.glob("batch*/*_rankings.json"))
    out = []
    for rel in rels:
        folder, name = rel.split("/")
        shown = src.path / folder / name.replace("_rankings.json", ".json")
        out.append((int(folder.removeprefix("batch")), name.removesuffix("_rankings.json"), shown, src.path / rel))
    return sorted(out)


def _sources_of(src: Source, batch: int) -> dict[str, str]:
    f = src.path / f"batch{batch}" / f"batch{batch}.json"
    if not f.exists():
        return {}
    return {str(r.get("id")): r.get("source") for r in read_json(f) if isinstance(r, dict)}


def _rank_map(f: Path, r: dict, mapping: dict) -> dict[str, int]:
    ranks = {}
    for k in (1, 2, 3):
        shown = r.get(f"rank_{k}")
        version = mapping.get(shown)
        if version not in VERSIONS or version in ranks:
            raise CrevalError(f"{f}: instruction_id {r.get('instruction_id')}: rank_{k} is {shown!r}, which names "
                              f"no unranked version of {sorted(mapping)}", "use LAMP's *_rankings.json files")
        ranks[version] = k
    return ranks


def load(given: str | Path | None = None) -> tuple[list[LampItem], list[LampRanking], Source]:
    """Every item as shown (one :class:`LampItem` per batch and ``instruction_id``), every writer's ranking,
    and the source. A real copy is checked file by file against :data:`PINS` first."""
    src = source(given, allow_download=True)
    check_pins(DATASET, src)
    items: dict[str, LampItem] = {}
    rankings: list[LampRanking] = []
    llm: dict[int, dict[str, str]] = {}
    for batch, writer, shown_f, rank_f in _files(src):
        if batch not in llm:
            llm[batch] = _sources_of(src, batch)
        shown = {int(s["instruction_id"]): s for s in _rows(shown_f, ("instruction_id", "id", "responses", "mapping"))}
        for r in _rows(rank_f, ("instruction_id", "rank_1", "rank_2", "rank_3")):
            s = shown.get(int(r["instruction_id"]))
            if s is None:
                raise CrevalError(f"{rank_f}: instruction_id {r['instruction_id']} is not in {shown_f.name}",
                                  "use the rankings file that belongs to that writer's file")
            mapping = {f"Response {i + 1}": s["mapping"].get(f"Response {i + 1}") for i in range(len(s["responses"]))}
            iid, unit = item_id(batch, r["instruction_id"]), unit_id(s["id"])
            if iid not in items:
                texts = {mapping[f"Response {i + 1}"]: clean(t) for i, t in enumerate(s["responses"])}
                items[iid] = LampItem(iid, unit, batch, clean(s.get("instruction")), llm[batch].get(str(s["id"])),
                                      texts)
            rankings.append(LampRanking(iid, unit, batch, writer, _rank_map(rank_f, r, mapping)))
    if not rankings:
        raise CrevalError(f"lamp: no rankings in {src}", DATASET.how)
    return list(items.values()), rankings, src


def _rows(f: Path, need: tuple[str, ...]) -> list[dict]:
    if not f.exists():
        raise CrevalError(f"lamp: {f} is missing", DATASET.how)
    rows = read_json(f)
    if not isinstance(rows, list) or not all(isinstance(r, dict) and set(need) <= set(r) for r in rows):
        raise CrevalError(f"{f}: expected a list of rows with {', '.join(need)}", "use LAMP's preference_ranking files")
    return rows


def ranks_of(rankings) -> dict[tuple[str, str], list[int]]:
    """Every writer's rank of each (item, version), gathered from the rankings: ``{(item_id, version): [rank,
    ...]}``."""
    ranks: dict[tuple[str, str], list[int]] = {}
    for r in rankings:
        for v, k in r.ranks.items():
            ranks.setdefault((r.item_id, v), []).append(k)
    return ranks
