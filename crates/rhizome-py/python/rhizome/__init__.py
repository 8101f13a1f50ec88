"""Rhizome: a GraphRAG engine. Index documents into a knowledge graph and answer questions
from it with citations, offline or with any LLM.

    from rhizome import Rhizome
    rz = Rhizome("./index")
    rz.index(["docs/"])
    r = rz.query("Who shared the Nobel Prize with Aage Bohr?", method="hippo")
    print(r.answer, r.contexts[0].source)

Every call runs in the engine (Rust) with the GIL released: Python threads query in
parallel. Writes (`index`, `index_texts`, `import_file`, `delete`) can be stopped with
Ctrl-C: what was committed stays, and indexing again completes the rest.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import sys
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native
from ._native import BadInputError, BusyError, NotFoundError, RhizomeError
from ._types import (
    Community,
    Context,
    DeleteResult,
    DocumentPage,
    DocumentSummary,
    EntityDetail,
    EvalResult,
    GraphEdge,
    GraphNode,
    IndexResult,
    MethodInfo,
    Progress,
    QueryResult,
    Record,
    Stats,
    Subgraph,
)

__all__ = [
    "Rhizome",
    "RhizomeError",
    "BadInputError",
    "NotFoundError",
    "BusyError",
    "Community",
    "Context",
    "DeleteResult",
    "DocumentPage",
    "DocumentSummary",
    "EntityDetail",
    "EvalResult",
    "GraphEdge",
    "GraphNode",
    "IndexResult",
    "MethodInfo",
    "Progress",
    "QueryResult",
    "Record",
    "Stats",
    "Subgraph",
]

PathLike = Union[str, "os.PathLike[str]"]
#: A filter: "type=report", a list of such, or {"type": "report", "after": "2024-01-01"}
#: (a list value gives alternatives).
Filter = Union[None, str, Sequence[str], Mapping[str, Union[str, Sequence[str]]]]


def _filters(f: Filter) -> List[str]:
    if f is None:
        return []
    if isinstance(f, str):
        return [f]
    if isinstance(f, Mapping):
        out: List[str] = []
        for k, v in f.items():
            values = [v] if isinstance(v, str) else list(v)
            out.extend(f"{k}={x}" for x in values)
        return out
    return [str(x) for x in f]


def _settings(settings: Optional[Mapping[str, Any]]) -> List[str]:
    out = []
    for k, v in (settings or {}).items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        out.append(f"{k}={v}")
    return out


def _progress(callback: Optional[Callable[[Progress], Any]]) -> Optional[Callable[..., Any]]:
    if callback is None:
        return None

    def call(event: str, stage: str, done: int, total: int, message: str) -> None:
        callback(Progress(event, stage, done, total, message))

    return call


def _history(history: Optional[Iterable[Any]]) -> List[Tuple[str, str]]:
    out = []
    for m in history or []:
        if isinstance(m, Mapping):
            out.append((str(m["role"]), str(m["content"])))
        else:
            role, content = m
            out.append((str(role), str(content)))
    return out


class Rhizome:
    """An index: a directory, or a store URL (`postgres://...`, `falkordb://...`).

    `settings` are configuration keys as `rhizome --set` takes them, e.g.
    `{"embed.model": "all-MiniLM-L6-v2", "llm.provider": "openai", "llm.model": "gpt-4o-mini"}`;
    they apply over `config` (a TOML file) and `RHIZOME_*` environment variables. With
    `wait=False` a write refuses at once when another process holds the index.
    """

    def __init__(
        self,
        index: PathLike = ".rhizome",
        *,
        settings: Optional[Mapping[str, Any]] = None,
        config: Optional[PathLike] = None,
        wait: bool = True,
    ) -> None:
        self._index = _native.Index(os.fspath(index), _settings(settings), os.fspath(config) if config else None, wait)

    def __repr__(self) -> str:
        return f"Rhizome({self._index.location()!r})"

    # Writing.

    def index(self, paths: Union[PathLike, Iterable[PathLike]], *, progress: Optional[Callable[[Progress], Any]] = None) -> IndexResult:
        """Index files and folders (recursively): text, Markdown, HTML, PDF, Office, EPUB,
        mail, images (OCR). Unchanged files are skipped; changed ones replace their old version."""
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        out = self._index.index([os.fspath(p) for p in paths], _progress(progress))
        return IndexResult.from_dict(json.loads(out))

    def index_texts(
        self,
        texts: Iterable[Union[str, Tuple[str, str], Mapping[str, str]]],
        *,
        progress: Optional[Callable[[Progress], Any]] = None,
    ) -> IndexResult:
        """Index texts held in memory: each a string, a `(title, text)` pair or a mapping
        with `text` and optional `title` and `source` (default source: `text:TITLE`)."""
        items: List[Tuple[str, str, Optional[str]]] = []
        for i, t in enumerate(texts):
            if isinstance(t, str):
                items.append((f"text {i + 1}", t, None))
            elif isinstance(t, Mapping):
                items.append((str(t.get("title") or f"text {i + 1}"), str(t["text"]), t.get("source")))
            else:
                title, text = t
                items.append((str(title), str(text), None))
        out = self._index.index_texts(items, _progress(progress))
        return IndexResult.from_dict(json.loads(out))

    def import_file(self, kind: str, path: PathLike, *, progress: Optional[Callable[[Progress], Any]] = None) -> IndexResult:
        """Import another tool's output: `hipporag-openie`, `edges-csv`, `corpus` (JSON/JSONL
        passages), or `graphrag-parquet` in a wheel built with that feature."""
        out = json.loads(self._index.import_file(kind, os.fspath(path), _progress(progress)))
        if isinstance(out, Mapping) and "report" in out:
            return IndexResult.from_dict(out)
        return IndexResult.from_dict({"report": out})

    def delete(self, document: str) -> DeleteResult:
        """Delete a document by id or source: the index is then as if it had never held it."""
        return DeleteResult.from_dict(json.loads(self._index.delete(document)))

    # Asking.

    def query(
        self,
        question: str,
        method: str = "basic",
        *,
        top_k: Optional[int] = None,
        filter: Filter = None,
        params: Optional[Mapping[str, Any]] = None,
        history: Optional[Iterable[Any]] = None,
        retrieve_only: bool = False,
    ) -> QueryResult:
        """Answer `question` with `method` (see `methods()`). `params` are the method's
        settings for this question (`{"hippo.damping": 0.6}`); `history` earlier messages
        (`(role, content)` or `{"role", "content"}`), a follow-up being made self-contained
        first; `retrieve_only` returns the evidence without writing an answer."""
        out = self._index.query(
            question,
            method,
            top_k,
            _filters(filter),
            [(k, str(v)) for k, v in (params or {}).items()],
            _history(history),
            retrieve_only,
        )
        return QueryResult.from_dict(json.loads(out))

    async def aquery(self, question: str, method: str = "basic", **kwargs: Any) -> QueryResult:
        """`query` for asyncio: runs in the loop's default executor (the GIL is released
        while the engine works, so other tasks and threads go on)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(self.query, question, method, **kwargs))

    def retrieve(self, question: str, method: str = "hippo", *, top_k: Optional[int] = None, filter: Filter = None) -> List[Context]:
        """The evidence for `question`, without an answer."""
        return self.query(question, method, top_k=top_k, filter=filter, retrieve_only=True).contexts

    def eval(
        self,
        questions: PathLike,
        method: str = "hippo",
        *,
        k: Sequence[int] = (2, 5),
        answers: bool = False,
        limit: Optional[int] = None,
    ) -> EvalResult:
        """Recall@k of `method` on a question file (MuSiQue, HotpotQA, 2Wiki formats)."""
        out = self._index.eval(os.fspath(questions), method, list(k), answers, limit)
        return EvalResult.from_dict(json.loads(out))

    def analyze(self, question: str) -> Dict[str, Any]:
        """Query analysis: type, complexity, key concepts, multi-hop."""
        return json.loads(self._index.analyze(question))

    # Reading the index.

    def stats(self) -> Stats:
        return Stats.from_dict(json.loads(self._index.stats()))

    def documents(self, search: Optional[str] = None, *, offset: int = 0, limit: int = 100) -> DocumentPage:
        """Documents by title (`search` in title or source), a page at a time."""
        return DocumentPage.from_dict(json.loads(self._index.documents(search, offset, limit)))

    def document(self, id: str) -> Dict[str, Any]:
        """One document (by id or source): its text, pages, metadata, chunks and entities."""
        return json.loads(self._index.document(id))

    def entities(self, prefix: str, limit: int = 20) -> List[GraphNode]:
        """Entities whose name starts so (any script; Vietnamese also without diacritics)."""
        return [GraphNode.from_dict(d) for d in json.loads(self._index.entities(prefix, limit))]

    def entity(self, entity: str) -> EntityDetail:
        """One entity (by id, or the first whose name starts so) in full."""
        return EntityDetail.from_dict(json.loads(self._index.entity(entity)))

    def neighbourhood(self, entity: str, depth: int = 1, max_nodes: int = 100) -> Subgraph:
        """The graph around an entity (id or name), `depth` steps out."""
        return Subgraph.from_dict(json.loads(self._index.neighbourhood(entity, depth, max_nodes)))

    def communities(self, level: Optional[int] = None) -> List[Community]:
        return [Community.from_dict(d) for d in json.loads(self._index.communities(level))]

    def methods(self) -> List[MethodInfo]:
        """The retrieval methods, with what each does and its settings."""
        return [MethodInfo.from_dict(d) for d in json.loads(self._index.methods())]

    def formats(self) -> List[Dict[str, Any]]:
        """The file types `index` reads."""
        return json.loads(self._index.formats())

    # Other frameworks (imported only when asked for).

    def serve(self, addr: str = "127.0.0.1:0", *, api_keys: Optional[Iterable[str]] = None) -> _native.Serving:
        """Serve this index over HTTP as `rhizome serve` does (the API, the OpenAI- and
        Ollama-compatible chat, the web UI and `/mcp`), on threads of its own, until the
        handle's `stop()`. Port 0 takes a free port (the handle's `url` says which); without
        `api_keys` (`KEY`, or `KEY:ro` for a read-only key) only loopback addresses are allowed."""
        return self._index.serve(addr, list(api_keys or []))

    def mcp(self, *, read_only: bool = False) -> None:
        """Serve this index over the Model Context Protocol on this process's stdin and
        stdout, as `rhizome mcp` does, until the client closes stdin (or Ctrl-C): the
        command of an MCP client configuration, e.g. `python -c "from rhizome import
        Rhizome; Rhizome('./index').mcp()"`. Nothing else may write to stdout meanwhile.
        `read_only` leaves out the tools that write."""
        sys.stdout.flush()
        self._index.mcp(read_only)

    def as_langchain_retriever(self, method: str = "hippo", top_k: int = 5, filter: Filter = None) -> Any:
        from .langchain import RhizomeRetriever

        return RhizomeRetriever(rhizome=self, method=method, top_k=top_k, filter=_filters(filter))

    def as_llama_index_retriever(self, method: str = "hippo", top_k: int = 5, filter: Filter = None) -> Any:
        from .llama_index import RhizomeRetriever

        return RhizomeRetriever(self, method=method, top_k=top_k, filter=_filters(filter))
