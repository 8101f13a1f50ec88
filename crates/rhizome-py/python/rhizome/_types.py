"""Typed results. Each is a dataclass made from the engine's JSON; `to_dict()` gives that
JSON back (with every field, including those not lifted into attributes)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Optional, Type, TypeVar

T = TypeVar("T", bound="Record")


@dataclass
class Record:
    """A result of the engine: attributes for its fields, `to_dict()` for all of it."""

    _raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    #: Nested fields: name -> record type (a list of them when the value is a list).
    NESTED: ClassVar[Dict[str, Type["Record"]]] = {}

    @classmethod
    def from_dict(cls: Type[T], data: Dict[str, Any]) -> T:
        nested = cls.NESTED
        kwargs: Dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name.startswith("_") or f.name not in data:
                continue
            value = data[f.name]
            kind = nested.get(f.name)
            if kind is not None and value is not None:
                value = [kind.from_dict(v) for v in value] if isinstance(value, list) else kind.from_dict(value)
            kwargs[f.name] = value
        obj = cls(**kwargs)
        obj._raw = data
        return obj

    def to_dict(self) -> Dict[str, Any]:
        """The engine's JSON for this result."""
        return self._raw


@dataclass
class Context(Record):
    """One piece of evidence: a passage, an entity, a relation, a fact, a report or a claim."""

    kind: str = ""
    id: str = ""
    text: str = ""
    score: float = 0.0
    #: The document's source (a file path, `upload:NAME`, `text:TITLE`), or what else it came from.
    source: str = ""
    title: str = ""
    #: The pages (slides, sheets) of a paged document the evidence is on.
    pages: Optional[Dict[str, Any]] = None

    def cite(self) -> str:
        """How an answer cites it: `report.pdf, p. 3`."""
        if not self.pages:
            return self.source
        unit, first, last = self.pages.get("unit", "page"), self.pages.get("first"), self.pages.get("last")
        one, many = {"page": ("p.", "pp."), "slide": ("slide", "slides"), "sheet": ("sheet", "sheets"),
                     "chapter": ("ch.", "chs.")}.get(unit, (unit, unit))
        return f"{self.source}, {one} {first}" if first == last else f"{self.source}, {many} {first}-{last}"


@dataclass
class QueryResult(Record):
    """An answer with its evidence."""

    NESTED = {"contexts": Context}

    question: str = ""
    method: str = ""
    #: Cites `contexts` as [n] (1-based).
    answer: str = ""
    #: `llm`, `extractive`, `none` (nothing retrieved) or `skipped` (retrieval only).
    answer_kind: str = ""
    contexts: List[Context] = field(default_factory=list)
    #: Reasoning paths through the graph, for methods that find them.
    paths: List[str] = field(default_factory=list)
    #: What the method did or skipped (e.g. the steps that need an LLM).
    notes: List[str] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict)
    timings_ms: Dict[str, float] = field(default_factory=dict)
    standalone_question: Optional[str] = None


@dataclass
class IndexResult(Record):
    """What an indexing or import call did."""

    report: Dict[str, Any] = field(default_factory=dict)
    skipped: List[Dict[str, str]] = field(default_factory=list)
    stats: Dict[str, Any] = field(default_factory=dict)
    warnings: List[str] = field(default_factory=list)
    communities: Optional[Dict[str, Any]] = None
    described: Optional[Dict[str, Any]] = None
    llm_usage: Optional[Dict[str, Any]] = None

    @property
    def documents_indexed(self) -> int:
        return int(self.report.get("documents_indexed", 0))


@dataclass
class DeleteResult(Record):
    deleted: Dict[str, int] = field(default_factory=dict)
    synonym_edges: Optional[int] = None
    communities: Optional[Dict[str, Any]] = None


@dataclass
class Stats(Record):
    """Node and edge counts by label."""

    nodes: Dict[str, int] = field(default_factory=dict)
    edges: Dict[str, int] = field(default_factory=dict)


@dataclass
class DocumentSummary(Record):
    """A document as listed: title, source, counts and what is known about it."""

    id: str = ""
    title: str = ""
    source: str = ""
    language: Optional[str] = None
    chunks: int = 0
    entities: int = 0
    indexed_at: Optional[int] = None
    pages: Optional[int] = None
    aliases: List[str] = field(default_factory=list)
    #: summary, type, hashtags, author, created, modified, media_type, size_bytes.
    meta: Dict[str, Any] = field(default_factory=dict)


@dataclass
class DocumentPage(Record):
    NESTED = {"documents": DocumentSummary}

    total: int = 0
    offset: int = 0
    documents: List[DocumentSummary] = field(default_factory=list)


@dataclass
class GraphNode(Record):
    id: str = ""
    name: str = ""
    entity_type: str = ""
    degree: int = 0
    community: Optional[str] = None


@dataclass
class GraphEdge(Record):
    id: str = ""
    source: str = ""
    target: str = ""
    kind: str = ""
    rel_type: str = ""
    weight: float = 0.0


@dataclass
class Subgraph(Record):
    NESTED = {"nodes": GraphNode, "edges": GraphEdge}

    center: str = ""
    nodes: List[GraphNode] = field(default_factory=list)
    edges: List[GraphEdge] = field(default_factory=list)
    truncated: bool = False


@dataclass
class EntityDetail(Record):
    """An entity in full: its record, other names, mentions, communities and claims."""

    entity: Dict[str, Any] = field(default_factory=dict)
    degree: int = 0
    aliases: List[Dict[str, Any]] = field(default_factory=list)
    mentions: List[Dict[str, Any]] = field(default_factory=list)
    communities: List[Dict[str, Any]] = field(default_factory=list)
    claims: List[Dict[str, Any]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.entity.get("name", ""))


@dataclass
class Community(Record):
    community: Dict[str, Any] = field(default_factory=dict)
    report: Optional[Dict[str, Any]] = None


@dataclass
class MethodInfo(Record):
    name: str = ""
    description: str = ""
    params: List[Dict[str, Any]] = field(default_factory=list)


@dataclass
class EvalResult(Record):
    """Recall@k (and EM/F1 with answers) of a method on a question set."""

    method: str = ""
    questions: int = 0
    #: Mean Recall@k by k (`"2"`, `"5"`).
    recall: Dict[str, float] = field(default_factory=dict)
    latency_ms: Dict[str, float] = field(default_factory=dict)
    answers: Optional[Dict[str, Any]] = None


@dataclass
class Progress:
    """One progress event of an indexing call."""

    #: `start`, `advance`, `finish`, `at` (where in a paged document) or `warning`.
    event: str
    stage: str
    done: int
    total: int
    message: str
