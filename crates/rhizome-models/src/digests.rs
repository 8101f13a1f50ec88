//! The pinned size and SHA-256 of every model file the project trusts, as installed from
//! the wheels its [`crate::ModelSpec`]s name. A new model, or a new version of a wheel,
//! comes with its lines here; a file that is not listed is never loaded.

/// One trusted file: `file` of the installed model `model`, its size and SHA-256 (hex).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trusted {
    pub model: &'static str,
    pub file: &'static str,
    pub len: u64,
    pub sha256: &'static str,
}

const fn t(model: &'static str, file: &'static str, len: u64, sha256: &'static str) -> Trusted {
    Trusted { model, file, len, sha256 }
}

/// Every trusted file (one line each, kept unwrapped for reading and diffs).
#[rustfmt::skip]
pub const TRUSTED: &[Trusted] = &[
    t("all-MiniLM-L6-v2", "config.json", 612, "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
    t("all-MiniLM-L6-v2", "model.safetensors", 90_868_376, "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
    t("all-MiniLM-L6-v2", "tokenizer.json", 466_247, "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
    t("multilingual-e5-small", "e5-small-q4.bin", 71_622_400, "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"),
    t("en-pos", "data/tagger.json.gz", 1_069_428, "4d8c07a3a9bcbef257c18999bb4ddcf501ecede229a8f9d9e62850623a6e97f7"),
    t("en-pos", "data/metadata.json", 831, "da90f9d8b9bbb31c545b3046dd4aacf2785030d7b8043356407e993109a34ed8"),
    t("en-pos", "perceptron.py", 4_564, "406117f5dc0ed4389e368c5581d1b851f9915d374ff1f441c12338fe2211fdfb"),
    t("smollm2-135m", "model.gguf", 98_362_432, "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"),
    t("qwen2.5-0.5b", "model.gguf", 491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
    t("qwen2.5-1.5b", "model.gguf", 1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
];

/// The trusted line of `file` of `model`, if there is one.
pub fn trusted(model: &str, file: &str) -> Option<&'static Trusted> {
    TRUSTED.iter().find(|t| t.model == model && t.file == file)
}
