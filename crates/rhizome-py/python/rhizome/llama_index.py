"""A LlamaIndex retriever over a Rhizome index. Importing this module imports
`llama_index.core` (`pip install llama-index-core`); `import rhizome` alone does not."""

from __future__ import annotations

from typing import Any, List, Optional

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode


class RhizomeRetriever(BaseRetriever):
    """Nodes for a query: each piece of evidence Rhizome retrieves as a `TextNode` (its id,
    text, and `source`, `title`, `citation`, `kind` as metadata) with its score.

        retriever = RhizomeRetriever(Rhizome("./index"), method="hippo", top_k=5)
        nodes = retriever.retrieve("Who founded the institute?")
    """

    def __init__(self, rhizome: Any, method: str = "hippo", top_k: int = 5,
                 filter: Optional[List[str]] = None, **kwargs: Any) -> None:
        self._rhizome = rhizome
        self._method = method
        self._top_k = top_k
        self._filter = filter
        super().__init__(**kwargs)

    def _retrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        contexts = self._rhizome.retrieve(query_bundle.query_str, self._method, top_k=self._top_k, filter=self._filter)
        return [
            NodeWithScore(
                node=TextNode(
                    id_=c.id,
                    text=c.text,
                    metadata={"source": c.source, "title": c.title, "citation": c.cite(), "kind": c.kind},
                ),
                score=c.score,
            )
            for c in contexts
        ]
