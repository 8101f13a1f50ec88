//! `import graphrag-parquet`: a Microsoft GraphRAG output folder imported through the
//! pipeline, then its covariates, communities and reports.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use rhizome_core::{Result, Stats};
use rhizome_ingest::chunk::TokenChunker;
use rhizome_ingest::extract::NlpExtractor;
use rhizome_ingest::import_graphrag as gr;
use rhizome_ingest::pipeline::{IndexReport, Pipeline, Progress};
use serde::Serialize;

use crate::Engine;

/// What a GraphRAG import read and wrote.
#[derive(Debug, Clone, Serialize)]
pub struct GraphragOutcome {
    pub read: gr::ReadCounts,
    pub written: gr::Finished,
    pub report: IndexReport,
    pub warnings: Vec<String>,
    pub stats: Stats,
}

impl Engine {
    /// `import graphrag-parquet`: the pipeline on GraphRAG's documents, without entity
    /// summaries (GraphRAG's descriptions are summaries already) and without community
    /// detection (GraphRAG's communities are imported); then its covariates,
    /// communities and reports.
    pub fn import_graphrag(&self, dir: &Path, progress: &dyn Progress, cancel: &AtomicBool) -> Result<GraphragOutcome> {
        let mut gi = gr::read(dir)?;
        let mut store = self.writer(true)?;
        let embedder = self.embedder(store.as_ref())?;
        store.set_embedding_model(embedder.model_id(), embedder.dim())?;
        let config = self.config.calibrated(embedder.cosine_scale());
        let chunker = TokenChunker { size: config.chunk.size, overlap: config.chunk.overlap };
        rhizome_ingest::extract::en_pos::check_installed()?;
        let extractor = NlpExtractor::new(config.extract.max_entities_per_chunk);
        let pipeline = Pipeline {
            chunker: &chunker,
            extractor: &extractor,
            embedder: embedder.as_ref(),
            config: &config,
            progress,
            cancel,
            summarizer: None,
            summarize_min: 0,
        };
        let t = std::time::Instant::now();
        let mut report = pipeline.index_prepared(store.as_mut(), std::mem::take(&mut gi.imported.items))?;
        let t_finish = std::time::Instant::now();
        let written = gr::finish(store.as_mut(), embedder.as_ref(), &gi)?;
        report.timings_ms.insert("covariates_communities_reports".into(), t_finish.elapsed().as_secs_f64() * 1e3);
        report.timings_ms.insert("total".into(), t.elapsed().as_secs_f64() * 1e3);
        store.set_meta("extractor", "graphrag-parquet")?;
        let mut warnings = gi.imported.dropped.clone();
        warnings.extend(written.warnings.iter().cloned());
        Ok(GraphragOutcome { read: gi.counts.clone(), written, report, warnings, stats: store.stats()? })
    }
}
