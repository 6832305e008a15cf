"""Fragment store of the retrieval judge (paper app. D.2.1): ChromaDB with our own embeddings.

One collection per problem-solution pair (reset when the pair is judged again, so a rerun sees exactly
the same fragments in the same order). Each fragment carries metadata ``agent``, ``phase``, ``round``
and ``criterion`` (``"*"`` for the initial insights shared by all criteria of the pair). Retrieval is
cosine top-n over the fragments visible at that moment: ``criterion in {c, "*"}`` and ``round <= r``.
Embeddings come from :class:`creval.models.embeddings.Embedder` (cached per text); ChromaDB gets
``embedding_function=None`` so it never tries to download its own model.

Units judge pairs in threads: every ChromaDB operation runs under one process lock (its local client is not
documented as thread-safe; the operations take milliseconds), and the in-memory stores of one process, which
ChromaDB backs with one shared system, each name their collections apart, so no judge sees another's
fragments of the same pair.
"""
from __future__ import annotations

import hashlib
import itertools
import threading
from dataclasses import dataclass
from pathlib import Path

from creval.models import heavy
from creval.models.embeddings import Embedder

CHROMA_LOCK = threading.RLock()
_EPHEMERAL = itertools.count()      # numbers the in-memory stores of this process (names only, never records)


@dataclass
class Fragment:
    id: str
    text: str
    agent: str
    phase: str
    round: int
    criterion: str
    distance: float | None = None


class FragmentStore:
    def __init__(self, path: str | Path | None = None, embedder: Embedder | None = None):
        chromadb = heavy.chromadb()
        settings = heavy.chromadb_settings()(anonymized_telemetry=False, allow_reset=True)
        with CHROMA_LOCK:
            if path is None:
                self.client, self.space = chromadb.EphemeralClient(settings=settings), f"m{next(_EPHEMERAL)}_"
            else:
                Path(path).mkdir(parents=True, exist_ok=True)
                self.client, self.space = chromadb.PersistentClient(path=str(path), settings=settings), ""
        self.embedder = embedder or Embedder()
        self._cols: dict[str, object] = {}

    def collection_name(self, pair_id: str) -> str:
        return f"pair_{self.space}" + hashlib.sha1(pair_id.encode()).hexdigest()[:24]

    def reset(self, pair_id: str):
        name = self.collection_name(pair_id)
        with CHROMA_LOCK:
            try:
                self.client.delete_collection(name)
            except Exception:  # noqa: BLE001 - absent collection
                pass
            col = self.client.create_collection(name, embedding_function=None,
                                                configuration={"hnsw": {"space": "cosine"}},
                                                metadata={"pair_id": pair_id})
            self._cols[pair_id] = col
        return col

    def _col(self, pair_id: str):
        """The pair's collection (call it holding :data:`CHROMA_LOCK`)."""
        if pair_id not in self._cols:
            self._cols[pair_id] = self.client.get_or_create_collection(
                self.collection_name(pair_id), embedding_function=None, configuration={"hnsw": {"space": "cosine"}})
        return self._cols[pair_id]

    def add(self, pair_id: str, fragments: list[Fragment]) -> None:
        if not fragments:
            return
        emb = self.embedder.encode([f.text for f in fragments])
        with CHROMA_LOCK:
            self._col(pair_id).upsert(
                ids=[f.id for f in fragments], documents=[f.text for f in fragments], embeddings=emb.tolist(),
                metadatas=[{"agent": f.agent, "phase": f.phase, "round": int(f.round), "criterion": f.criterion}
                           for f in fragments])

    def count(self, pair_id: str) -> int:
        with CHROMA_LOCK:
            return self._col(pair_id).count()

    def get(self, pair_id: str, query: str, n: int, criterion: str, max_round: int) -> list[Fragment]:
        """Top-``n`` fragments by cosine similarity to ``query`` among those visible for ``criterion``."""
        where = {"$and": [{"criterion": {"$in": [criterion, "*"]}}, {"round": {"$lte": int(max_round)}}]}
        with CHROMA_LOCK:
            visible = self._col(pair_id).get(where=where, include=[])["ids"]
        if not visible or n <= 0:
            return []
        q = self.embedder.encode([query])[0].tolist()
        # ask for a few extra and order ties by id: identical texts have identical distances, and ChromaDB's
        # order among ties is not stable across collections (a rerun must see the same prompt -> cache hit)
        with CHROMA_LOCK:
            res = self._col(pair_id).query(query_embeddings=[q], n_results=min(n + 10, len(visible)), where=where,
                                           include=["documents", "metadatas", "distances"])
        out = []
        for i, d, m, dist in zip(res["ids"][0], res["documents"][0], res["metadatas"][0], res["distances"][0]):
            out.append(Fragment(i, d, m["agent"], m["phase"], m["round"], m["criterion"], float(dist)))
        out.sort(key=lambda f: (round(f.distance, 5), f.id))
        return out[:n]
