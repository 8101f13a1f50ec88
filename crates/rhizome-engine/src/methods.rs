//! The catalogue of retrieval methods with the settings each one reads and their values
//! in this engine's config: what a method picker shows, with the defaults filled in.

use rhizome_retrieve::Method;
use serde::Serialize;

use crate::Engine;

/// A method and its settings.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MethodInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub params: Vec<MethodParam>,
}

/// One setting: its key as a per-query parameter takes it (`hippo.damping`), its value in
/// the engine's config, and the values it accepts.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MethodParam {
    /// `section.key`, as in the config file.
    pub key: String,
    /// Its value in the engine's config (the default a query starts from).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub value: serde_json::Value,
    /// The values it accepts.
    pub valid: String,
}

impl Engine {
    /// Every method, `auto` last, each with the settings it reads (`retrieval` first).
    pub fn methods(&self) -> Vec<MethodInfo> {
        let config = toml::Value::try_from(&self.config).unwrap_or(toml::Value::Table(Default::default()));
        Method::ALL
            .iter()
            .map(|&m| {
                let mut params = Vec::new();
                for section in std::iter::once("retrieval").chain(m.settings_sections()) {
                    let Some(table) = config.get(section).and_then(|v| v.as_table()) else { continue };
                    for (k, v) in table {
                        let key = format!("{section}.{k}");
                        // Only settings with a rule: free text (prompts, paths) is not a knob.
                        let Some(r) = self.config.rule(&key) else { continue };
                        let value = match v {
                            // Settings are f32: show 0.1, not 0.10000000149011612.
                            toml::Value::Float(f) => {
                                serde_json::json!((*f as f32).to_string().parse::<f64>().unwrap_or(*f))
                            }
                            v => serde_json::to_value(v).unwrap_or(serde_json::Value::Null),
                        };
                        params.push(MethodParam { key, value, valid: r.range.describe() });
                    }
                }
                MethodInfo { name: m.as_str(), description: m.description(), params }
            })
            .collect()
    }
}
