"""A local, offline word n-gram index: exact membership of word L-grams in a reference corpus.

The creativity index (Lu et al. 2024c, "AI as Humanity's Salieri"; used by Lu et al. 2025, "Rethinking
creativity evaluation", Sec. 4 and App. B) asks, for every window of L words of a text, whether the same
L words occur verbatim in a reference corpus. The anchors query infini-gram over a web corpus; here the
reference is a corpus we index ourselves:

- words: :func:`word_tokenize` (ASCII fold, then a regex close to NLTK's ``casual_tokenize``: decimal
  numbers, runs of letters/digits with inner apostrophes or hyphens kept whole, each other symbol alone;
  case kept);
- per n-gram length L, the sorted ``uint64`` hashes of every L-gram of every reference document (n-grams
  never cross documents), queried with ``np.searchsorted`` (vectorised, one call per length and batch);
- groups, for leave-group-out references: each reference document belongs to a group (a MacGyver problem,
  a TTCW plot); per distinct L-gram the index stores how many groups contain it and one owner group, so
  "occurs outside group g" is exact and O(1): ``n_groups >= 2 or owner != g``;
- the index is saved (``.npz``) with the sha256 of its corpus (documents, groups, tokenizer, lengths),
  so a result can name the exact reference it was measured against.

Hashes: each distinct word gets a 64-bit value (blake2b of the word) and an L-gram the polynomial
``sum_k v[x_{i+k}] * P^(L-1-k) mod 2^64``. Two different L-grams share a hash with probability about
2^-64 per pair; :func:`creval.measures.creativity_index` is tested equal to an exact set-of-tuples
computation.
"""
from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from creval.core import paths
from creval.core.errors import CrevalError

TOKENIZER = "casual-regex+ascii-fold"
_P = np.uint64(0x9E3779B97F4A7C15)          # odd multiplier of the polynomial hash
_NO_GROUP = -1
_FOLD = {"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u201c": '"', "\u201d": '"',
         "\u201e": '"', "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u2026": "...", "\u00a0": " "}
_WORD = re.compile(r"\d+(?:[.,:]\d+)+|\w+(?:['\-]\w+)*|\.\.\.|[^\w\s]")


def ascii_fold(text: str) -> str:
    """Curly quotes, dashes and ellipses to ASCII, then accents dropped (NFKD), other non-ASCII removed."""
    text = "".join(_FOLD.get(c, c) for c in str(text))
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def word_tokenize(text: str) -> list[str]:
    """Word tokens of ``text`` for n-gram matching: ``<br>`` is a space, case is kept, "don't" and
    "well-known" are one token, every punctuation mark its own token."""
    text = re.sub(r"<br\s*/?>", " ", str(text or ""), flags=re.I)
    return _WORD.findall(ascii_fold(text))


class TokenValues:
    """The 64-bit values of the tokens this process has seen, memoised (:meth:`reset` forgets them)."""

    def __init__(self):
        self.memo: dict[str, np.uint64] = {}

    def reset(self) -> None:
        self.memo.clear()


TOKEN_VALUES = TokenValues()


def token_values(tokens: Sequence[str]) -> np.ndarray:
    """The 64-bit value of each token (blake2b of its UTF-8 string; memoised per process in ``TOKEN_VALUES``)."""
    memo = TOKEN_VALUES.memo
    out = np.empty(len(tokens), dtype=np.uint64)
    for i, t in enumerate(tokens):
        v = memo.get(t)
        if v is None:
            v = np.uint64(int.from_bytes(hashlib.blake2b(t.encode("utf-8"), digest_size=8).digest(), "little"))
            memo[t] = v
        out[i] = v
    return out


def window_hashes(values: np.ndarray, L: int) -> np.ndarray:
    """Hash of every window of ``L`` consecutive token values (``len(values) - L + 1`` of them; none if
    the text is shorter than L)."""
    n = len(values) - L + 1
    if n <= 0:
        return np.empty(0, dtype=np.uint64)
    h = values[:n].copy()
    with np.errstate(over="ignore"):
        for k in range(1, L):
            h = h * _P + values[k:k + n]
    return h


def ngram_hash(tokens: Sequence[str]) -> int:
    """The hash of one n-gram (the same value :func:`window_hashes` gives its only window)."""
    return int(window_hashes(token_values(tokens), len(tokens))[0])


@dataclass
class NgramIndex:
    """Sorted n-gram hashes per length, with group counts for leave-group-out queries."""
    lengths: tuple[int, ...]
    hashes: dict[int, np.ndarray] = field(repr=False)      # L -> sorted unique uint64
    n_groups: dict[int, np.ndarray] = field(repr=False)    # L -> groups holding the n-gram (int32)
    owner: dict[int, np.ndarray] = field(repr=False)       # L -> one group holding it (int32)
    groups: list[str] = field(repr=False)                   # group id -> group name
    corpus_hash: str = ""
    n_docs: int = 0
    n_tokens: int = 0
    name: str = "reference"
    tokenizer: str = TOKENIZER

    # -- building -------------------------------------------------------------------------------
    @classmethod
    def build(cls, docs: Iterable[tuple[str | None, str]] | Iterable[str], lengths: Iterable[int] = range(1, 13),
              name: str = "reference") -> "NgramIndex":
        """Index ``docs``: ``(group, text)`` pairs (``group`` None: a group of its own) or plain texts."""
        lengths = tuple(sorted({int(L) for L in lengths}))
        if not lengths or lengths[0] < 1:
            raise ValueError(f"n-gram lengths must be >= 1, got {lengths}")
        gid: dict[str, int] = {}
        per_len: dict[int, list[np.ndarray]] = {L: [] for L in lengths}
        per_grp: dict[int, list[np.ndarray]] = {L: [] for L in lengths}
        digest = hashlib.sha256(json.dumps({"tokenizer": TOKENIZER, "lengths": lengths}).encode())
        n_docs = n_tok = 0
        for d in docs:
            group, text = (None, d) if isinstance(d, str) else d
            key = f"\0doc{n_docs}" if group is None else str(group)
            g = gid.setdefault(key, len(gid))
            toks = word_tokenize(text)
            digest.update(json.dumps([key, toks]).encode())
            n_docs += 1
            n_tok += len(toks)
            vals = token_values(toks)
            for L in lengths:
                h = window_hashes(vals, L)
                if h.size:
                    per_len[L].append(h)
                    per_grp[L].append(np.full(h.size, g, dtype=np.int32))
        hashes, counts, owners = {}, {}, {}
        for L in lengths:
            h = np.concatenate(per_len[L]) if per_len[L] else np.empty(0, np.uint64)
            g = np.concatenate(per_grp[L]) if per_grp[L] else np.empty(0, np.int32)
            order = np.lexsort((g, h))
            h, g = h[order], g[order]
            new_pair = np.ones(h.size, dtype=bool)
            new_pair[1:] = (h[1:] != h[:-1]) | (g[1:] != g[:-1])
            h, g = h[new_pair], g[new_pair]                 # distinct (hash, group) pairs
            first = np.ones(h.size, dtype=bool)
            first[1:] = h[1:] != h[:-1]
            starts = np.flatnonzero(first)
            hashes[L] = h[starts]
            owners[L] = g[starts]
            counts[L] = np.diff(np.append(starts, h.size)).astype(np.int32)
        return cls(lengths, hashes, counts, owners, [k for k in gid], digest.hexdigest(), n_docs, n_tok, name)

    # -- queries --------------------------------------------------------------------------------
    def __post_init__(self):
        self._gmap = {g: i for i, g in enumerate(self.groups)}

    def group_id(self, group: str | None) -> int:
        """The index's id of ``group`` (-1 for None or a group the reference does not hold)."""
        return _NO_GROUP if group is None else self._gmap.get(str(group), _NO_GROUP)

    def _check(self, L: int) -> None:
        if L not in self.hashes:
            raise CrevalError(f"n-gram length {L} is not in the index {self.name!r} (lengths {list(self.lengths)})",
                              "rebuild the index with that length in `lengths`")

    def lookup(self, hashes: np.ndarray, L: int, exclude: np.ndarray | int = _NO_GROUP) -> np.ndarray:
        """For each hash of an L-gram: is it in the reference outside group ``exclude`` (per hash or one)?"""
        self._check(L)
        ref = self.hashes[L]
        if ref.size == 0 or hashes.size == 0:
            return np.zeros(hashes.size, dtype=bool)
        pos = np.searchsorted(ref, hashes)
        pos_c = np.minimum(pos, ref.size - 1)
        found = ref[pos_c] == hashes
        ex = np.broadcast_to(np.asarray(exclude, dtype=np.int64), hashes.shape)
        outside = (self.n_groups[L][pos_c] >= 2) | (self.owner[L][pos_c] != ex)
        return found & outside

    def matched(self, tokens: Sequence[str], L: int, exclude_group: str | None = None) -> np.ndarray:
        """Boolean per window start i: is ``tokens[i:i+L]`` in the reference (outside ``exclude_group``)?"""
        return self.lookup(window_hashes(token_values(tokens), L), L, self.group_id(exclude_group))

    def contains(self, ngram: Sequence[str], exclude_group: str | None = None) -> bool:
        """One n-gram, one query (the naive DJ-Search-style access path)."""
        L = len(ngram)
        return bool(self.lookup(np.array([ngram_hash(ngram)], dtype=np.uint64), L, self.group_id(exclude_group))[0])

    # -- persistence ----------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {}
        for L in self.lengths:
            arrays[f"h{L}"], arrays[f"c{L}"], arrays[f"o{L}"] = self.hashes[L], self.n_groups[L], self.owner[L]
        meta = {"lengths": list(self.lengths), "groups": self.groups, "corpus_hash": self.corpus_hash,
                "n_docs": self.n_docs, "n_tokens": self.n_tokens, "name": self.name, "tokenizer": self.tokenizer}
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, meta=np.array(json.dumps(meta)), **arrays)
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> "NgramIndex":
        try:
            z = np.load(Path(path), allow_pickle=False)
            meta = json.loads(str(z["meta"]))
        except (OSError, ValueError, KeyError) as e:
            raise CrevalError(f"{path}: not an n-gram index ({e})",
                              "rebuild it (NgramIndex.build(...).save(path))") from None
        Ls = tuple(meta["lengths"])
        return cls(Ls, {L: z[f"h{L}"] for L in Ls}, {L: z[f"c{L}"] for L in Ls}, {L: z[f"o{L}"] for L in Ls},
                   list(meta["groups"]), meta["corpus_hash"], meta["n_docs"], meta["n_tokens"], meta["name"],
                   meta["tokenizer"])

    def describe(self) -> dict:
        return {"reference": self.name, "reference_hash": self.corpus_hash[:16], "docs": self.n_docs,
                "tokens": self.n_tokens, "groups": len(self.groups),
                "lengths": f"{self.lengths[0]}..{self.lengths[-1]}"}


def cached_index(docs: list[tuple[str | None, str]], lengths: Iterable[int], name: str,
                 folder: str | Path | None = None) -> NgramIndex:
    """:meth:`NgramIndex.build`, saved under ``folder`` (default: the artifacts folder) by corpus hash and
    reloaded when the same corpus is asked again."""
    lengths = tuple(sorted(set(lengths)))
    digest = hashlib.sha256(json.dumps({"t": TOKENIZER, "L": lengths, "docs": docs}).encode()).hexdigest()[:20]
    folder = Path(folder) if folder else paths.artifacts_dir() / "ngram_index"
    f = folder / f"{name}-{digest}.npz"
    if f.exists():
        return NgramIndex.load(f)
    idx = NgramIndex.build(docs, lengths, name)
    idx.save(f)
    return idx


def folder_documents(folder: str | Path, pattern: str = "*.txt") -> list[tuple[str, str]]:
    """Every text file under ``folder`` as ``(relative path, text)`` (each file its own group)."""
    root = Path(folder)
    if not root.is_dir():
        raise CrevalError(f"{root}: no such folder of reference texts", "give a folder holding .txt files")
    files = sorted(p for p in root.rglob(pattern) if p.is_file())
    if not files:
        raise CrevalError(f"{root}: holds no {pattern} files", "put the reference corpus there as text files")
    return [(str(p.relative_to(root)), p.read_text(encoding="utf-8", errors="replace")) for p in files]
