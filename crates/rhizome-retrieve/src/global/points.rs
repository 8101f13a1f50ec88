//! Map batches and analysts' points for `global`.

use rhizome_core::text::count_tokens;
use serde_json::Value;

/// A report as the map step sees it: its number (1-based, stable for a question), the
/// text sent, and its tokens.
pub(crate) struct MapReport {
    pub number: usize,
    pub text: String,
    pub tokens: usize,
}

/// One point an analyst made.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Point {
    pub analyst: usize,
    pub description: String,
    pub score: f32,
    /// Report numbers the point cites.
    pub reports: Vec<usize>,
}

/// Fisher-Yates with splitmix64: the same seed gives the same order everywhere.
pub(crate) fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..items.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

/// Pack reports, in the given order, into batches of at most `budget` tokens; a report
/// larger than the budget alone is cut to it.
pub(crate) fn batches(reports: Vec<MapReport>, budget: usize) -> Vec<Vec<MapReport>> {
    let budget = budget.max(50);
    let mut out: Vec<Vec<MapReport>> = Vec::new();
    let mut used = 0;
    for mut r in reports {
        if r.tokens > budget {
            r.text = format!("{} …", crate::local::cut_to_tokens(&r.text, budget.saturating_sub(10)).trim_end());
            r.tokens = count_tokens(&r.text);
        }
        if out.is_empty() || used + r.tokens > budget {
            out.push(Vec::new());
            used = 0;
        }
        used += r.tokens;
        if let Some(b) = out.last_mut() {
            b.push(r);
        }
    }
    out
}

/// The reports of a batch as the map prompt shows them.
pub(crate) fn render_batch(batch: &[MapReport]) -> String {
    batch.iter().map(|r| format!("----- Report {} -----\n{}", r.number, r.text.trim())).collect::<Vec<_>>().join("\n\n")
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().trim_end_matches('%').parse().ok(),
        _ => None,
    }
    .filter(|x: &f64| x.is_finite())
}

/// The points in a map reply: `{"points": [...]}` or a bare list; each point needs a
/// description and a score (0-100, clamped). None when the reply is not usable at all.
pub(crate) fn parse_points(reply: &str, analyst: usize) -> Option<Vec<Point>> {
    let from_object = |o: &serde_json::Map<String, Value>| -> Option<Vec<Value>> {
        match o.get("points").or_else(|| o.get("key_points")) {
            Some(Value::Array(a)) => Some(a.clone()),
            _ if o.contains_key("description") => Some(vec![Value::Object(o.clone())]),
            _ => None,
        }
    };
    let bare = reply.trim().trim_start_matches("```json").trim_start_matches("```").trim_end_matches("```").trim();
    let items: Vec<Value> = match serde_json::from_str::<Value>(bare) {
        Ok(Value::Array(a)) => a,
        Ok(Value::Object(o)) => from_object(&o)?,
        _ => from_object(&crate::analyze::json_object(reply)?)?,
    };
    let mut out = Vec::new();
    for item in items {
        let Value::Object(o) = item else { continue };
        let description = match o.get("description").or_else(|| o.get("point")) {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            _ => continue,
        };
        let Some(score) = o.get("score").and_then(number) else { continue };
        let reports = match o.get("reports") {
            Some(Value::Array(a)) => a.iter().filter_map(number).filter(|x| *x >= 1.0).map(|x| x as usize).collect(),
            _ => Vec::new(),
        };
        out.push(Point { analyst, description, score: score.clamp(0.0, 100.0) as f32, reports });
    }
    Some(out)
}

/// Points with score > 0, best first (ties: analyst, then order), packed into `budget`
/// tokens as the reduce prompt shows them. Returns the text and the points kept.
pub(crate) fn pack_points(mut points: Vec<Point>, budget: usize) -> (String, Vec<Point>) {
    points.retain(|p| p.score > 0.0);
    points.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.analyst.cmp(&b.analyst)));
    let (mut text, mut used, mut kept) = (String::new(), 0, Vec::new());
    for p in points {
        let block =
            format!("----- Analyst {} -----\nImportance score: {:.0}\n{}\n\n", p.analyst, p.score, p.description);
        let t = count_tokens(&block);
        if used + t > budget {
            break;
        }
        used += t;
        text.push_str(&block);
        kept.push(p);
    }
    (text.trim_end().to_string(), kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_parsed_leniently_and_packed_by_score() {
        let reply = "```json\n{\"points\": [{\"description\": \"A\", \"score\": \"70\", \"reports\": [1, \"2\"]},\
                     {\"description\": \"\", \"score\": 50}, {\"description\": \"B\", \"score\": 150},\
                     {\"description\": \"C\", \"score\": 0}, {\"description\": \"D\"}]}\n```";
        let p = parse_points(reply, 3).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[0].reports, vec![1, 2]);
        assert_eq!(p[1].score, 100.0);
        let (text, kept) = pack_points(p, 1000);
        assert_eq!(kept.iter().map(|p| p.description.as_str()).collect::<Vec<_>>(), ["B", "A"]);
        assert!(text.starts_with("----- Analyst 3 -----\nImportance score: 100\nB"));
        assert!(parse_points("no idea", 1).is_none());
        assert_eq!(parse_points("[{\"description\": \"X\", \"score\": 5}]", 1).unwrap().len(), 1);
    }

    #[test]
    fn batches_respect_the_budget_and_shuffle_is_seeded() {
        let reps: Vec<MapReport> = (0..10)
            .map(|i| {
                let text = "word ".repeat(30 + i * 10);
                MapReport { number: i + 1, tokens: count_tokens(&text), text }
            })
            .collect();
        let b = batches(reps, 120);
        assert!(b.iter().all(|x| x.iter().map(|r| r.tokens).sum::<usize>() <= 120));
        assert_eq!(b.iter().map(Vec::len).sum::<usize>(), 10);
        let (mut x, mut y): (Vec<u32>, Vec<u32>) = ((0..20).collect(), (0..20).collect());
        shuffle(&mut x, 7);
        shuffle(&mut y, 7);
        assert_eq!(x, y);
        assert_ne!(x, (0..20).collect::<Vec<_>>());
    }
}
