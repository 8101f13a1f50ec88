"""A LangChain retriever over a Rhizome index. Importing this module imports
`langchain_core` (`pip install langchain-core`); `import rhizome` alone does not."""

from __future__ import annotations

from typing import Any, List, Optional

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever


class RhizomeRetriever(BaseRetriever):
    """Documents for a query: each piece of evidence Rhizome retrieves, its text as
    `page_content` and `source`, `title`, `citation`, `kind`, `score`, `id` (and `pages`)
    as metadata.

        retriever = RhizomeRetriever(rhizome=Rhizome("./index"), method="hippo", top_k=5)
        docs = retriever.invoke("Who founded the institute?")
    """

    rhizome: Any
    method: str = "hippo"
    top_k: int = 5
    filter: Optional[List[str]] = None

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> List[Document]:
        contexts = self.rhizome.retrieve(query, self.method, top_k=self.top_k, filter=self.filter)
        return [
            Document(
                page_content=c.text,
                metadata={
                    "source": c.source,
                    "title": c.title,
                    "citation": c.cite(),
                    "kind": c.kind,
                    "score": c.score,
                    "id": c.id,
                    **({"pages": c.pages} if c.pages else {}),
                },
            )
            for c in contexts
        ]
