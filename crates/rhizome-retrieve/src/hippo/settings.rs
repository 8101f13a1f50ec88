//! `hippo`'s settings (`[hippo]`): linking, seeding and Personalized PageRank, their valid ranges and calibration.
//! Each setting is one line of [`rhizome_core::section!`]: its default, and for numeric and
//! enum settings its rule and a `Valid: ...` sentence in its doc comment (`tests/settings.rs`
//! keeps the two in step).

use rhizome_core::config::Calibration;
use rhizome_core::section;

section! {
    "hippo",
    /// `hippo`: HippoRAG's Personalized PageRank. The defaults differ from HippoRAG 2's where
    /// a small local embedder (all-MiniLM-L6-v2) needs it; each field says why.
    pub struct HippoConfig {
        /// Facts kept after scoring all facts against the question (0: no fact is linked;
        /// passages are ranked by dense retrieval). Valid: an integer from 0 to 1000.
        pub linking_top_k: usize = 5 => int(0, 1000),
        /// Facts taken by cosine to the question before they are rescored with the score of
        /// their passage (`fact_context_weight`); the best `linking_top_k` of them are linked.
        /// Valid: an integer from 1 to 100000.
        pub fact_candidates: usize = 100 => int(1, 100_000),
        /// Share of a fact's linking score that comes from its passage: score = (1 - w) x
        /// min-max cosine of the fact + w x relative score of its best supporting passage
        /// (see `passage_temperature`). A short triple embedded alone is matched on its
        /// words; the passage it was read from says whether it is about the question's
        /// subject. 0: HippoRAG 2 (fact only). Valid: a number from 0 to 1.
        pub fact_context_weight: f32 = 0.5 => num(0.0, 1.0),
        /// Weight of the passage seeds in the reset vector, relative to entity seeds: the
        /// best passage gets this weight, an entity mentioned in one passage gets the score
        /// of its linked fact (at most 1). 1: the best passage and a sure fact link count
        /// alike (HippoRAG 2 uses 0.05 on min-max scores summed over every passage).
        /// Valid: a number from 0 to 100.
        pub passage_node_weight: f32 = 1.0 => num(0.0, 100.0),
        /// Relative passage scores are `exp((s - s_max) / T)` of the passage score `s`
        /// (cosine plus the BM25 share): a softmax over passages at the contrastive
        /// temperature of the embedder (0.05, i.e. scale 20, for sentence-transformers
        /// models). The seed mass then sits on passages that really match and does not grow
        /// with the corpus, and a fact from a passage far below the best one links weakly.
        /// 0: min-max normalised scores (HippoRAG 2; then use passage_node_weight 0.05).
        /// Valid: a number from 0 to 10.
        pub passage_temperature: f32 = 0.05 => num(0.0, 10.0),
        /// BM25 share of the passage score: cosine + w x BM25 / best BM25 (the lexical
        /// evidence `basic` also uses; names the embedder misses still seed their passages).
        /// 0.1, as `retrieval.bm25_weight`: the passage score then ranks as `basic` does, so
        /// the seed of the fused ranking is `basic`'s (0.3 ranked below it on MuSiQue).
        /// Valid: a number from 0 to 100.
        pub passage_bm25_weight: f32 = 0.1 => num(0.0, 100.0),
        /// Weight of the passage-entity edge between a passage and the entity its document is
        /// titled after (other passage-entity edges weigh 1): a passage is about its title
        /// entity, so a walk reaching that entity should land on that passage first.
        /// Valid: a number greater than 0 and at most 1000.
        pub title_edge_weight: f32 = 5.0 => above(0.0, 1000.0),
        /// PageRank damping: the probability of following an edge rather than jumping back
        /// to a seed. 0.8 (HippoRAG: 0.5): with passage seeds in the fused score, the walk
        /// should reach the second hop (passage -> entity -> passage) with real mass.
        /// Valid: a number greater than 0 and less than 1.
        pub damping: f32 = 0.8 => between(0.0, 1.0),
        /// Share of the final passage score that comes from PageRank: score = (1 - w) x
        /// relative passage score (dense + BM25, the seed) + w x PPR mass / best passage's
        /// PPR mass. Below 1 the graph re-ranks and extends the dense ranking instead of
        /// replacing it, so facts linked by mistake (frequent without an LLM) cannot push
        /// a well-matched passage far down. 1: HippoRAG (passages ranked by PPR alone).
        /// Valid: a number from 0 to 1.
        pub ppr_weight: f32 = 0.7 => num(0.0, 1.0),
        /// Seed weight of an entity whose name the question spells out (exact match after
        /// name normalisation, longest span first), divided like a fact seed by the number of
        /// passages the entity is mentioned in. Links the question to the graph without an
        /// LLM and without trusting an embedding of a short name. 0: off (HippoRAG).
        /// Valid: a number from 0 to 100.
        pub name_seed_weight: f32 = 1.0 => num(0.0, 100.0),
        /// Weight of the entity seeds of linked facts that no LLM recognised (no LLM, or
        /// `recognition_filter` off or failed); facts an LLM kept always weigh 1. A triple
        /// matched to the question by embedding alone often shares words with the question,
        /// not its subject. 1: HippoRAG (every linked fact seeds). Valid: a number from 0 to 1.
        pub unfiltered_fact_weight: f32 = 0.0 => num(0.0, 1.0),
        /// Nodes (entities and passages) past which PageRank runs on the subgraph around the
        /// question's seeds, of at most this many nodes, instead of the whole graph: the
        /// linked entities and the best-matching passages, then what they reach breadth-first
        /// (see `hippo/subgraph.rs`). The walk's cost then stops growing with the graph (the
        /// whole graph's forward push scans every node once per round). On a 40,000-passage
        /// index (445,000 nodes), 5000: hippo 1.11x basic's time instead of 2.41x, the exact
        /// solver's top 5 on 13 of 20 questions, recall within 0.06 (docs/benchmarks.md).
        /// 0 (default): the whole graph, except on an index above
        /// `retrieval.whole_graph_up_to` entities, where the graph is not loaded: there the
        /// walk is always bounded, by this or else by 5000 nodes, and its subgraph read
        /// through the store (`hippo/around.rs`).
        /// Valid: an integer from 0 to 100000000.
        pub ppr_nodes: usize = 0 => int(0, 100_000_000),
        /// Passages that go to the answer. Valid: an integer from 1 to 1000.
        pub qa_top_k: usize = 3 => int(1, 1000),
        /// With an LLM configured: let it filter the linked facts (recognition memory).
        pub recognition_filter: bool = true,
    }
    impl {
        /// The passage temperature and the BM25 share are added to cosines.
        fn calibrate(&mut self, c: Calibration) {
            self.passage_temperature = c.weight(self.passage_temperature);
            self.passage_bm25_weight = c.weight(self.passage_bm25_weight);
        }
    }
}
