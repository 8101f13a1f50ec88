//! The query-state graph of a DRIFT search: the root (the question, answered by the
//! primer), one node per answered follow-up, edges parent -> follow-up, and the follow-ups
//! proposed but not answered yet.

use std::collections::HashSet;

use serde_json::{json, Value};

/// An asked question and what answered it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub query: String,
    /// None: not answered (the root when the primer failed, every node offline).
    pub answer: Option<String>,
    pub score: Option<f32>,
    /// 0 for the root; a follow-up is one deeper than the node that proposed it.
    pub depth: usize,
}

/// A proposed follow-up, waiting to be answered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FollowUp {
    pub query: String,
    /// The node that proposed it.
    pub parent: usize,
}

/// Nodes (the root is node 0), edges and pending follow-ups.
#[derive(Debug, Clone)]
pub(crate) struct QueryState {
    pub nodes: Vec<Node>,
    pub edges: Vec<(usize, usize)>,
    pending: Vec<FollowUp>,
    /// Every query asked or proposed so far, folded ([`fold`]): nothing is asked twice.
    seen: HashSet<String>,
}

/// A question as compared for duplicates: lowercase, single spaces, no final `?` or `.`.
fn fold(q: &str) -> String {
    let words: Vec<String> = q.split_whitespace().map(str::to_lowercase).collect();
    words.join(" ").trim_end_matches(['?', '.', '!', ' ']).to_string()
}

impl QueryState {
    /// A state holding only the root, `question`.
    pub fn new(question: &str) -> Self {
        let root = Node { query: question.to_string(), answer: None, score: None, depth: 0 };
        QueryState { nodes: vec![root], edges: Vec::new(), pending: Vec::new(), seen: HashSet::from([fold(question)]) }
    }

    /// Give the root its (primer) answer and score.
    pub fn answer_root(&mut self, answer: String, score: f32) {
        self.nodes[0].answer = Some(answer);
        self.nodes[0].score = Some(score);
    }

    /// Queue follow-ups proposed by `parent`, skipping empty ones and any asked or proposed
    /// before (compared case-insensitively). Returns how many were queued.
    pub fn propose(&mut self, parent: usize, queries: &[String]) -> usize {
        let mut added = 0;
        for q in queries {
            let q = q.trim();
            if q.is_empty() || !self.seen.insert(fold(q)) {
                continue;
            }
            self.pending.push(FollowUp { query: q.to_string(), parent });
            added += 1;
        }
        added
    }

    /// Queue `query` under `parent` even if it was asked before (the question itself, when
    /// the primer gave nothing to follow).
    pub fn propose_again(&mut self, parent: usize, query: &str) {
        self.seen.insert(fold(query));
        self.pending.push(FollowUp { query: query.to_string(), parent });
    }

    /// Score of a pending follow-up: its parent's score (0 when the parent has none).
    fn pending_score(&self, f: &FollowUp) -> f32 {
        self.nodes[f.parent].score.unwrap_or(0.0)
    }

    /// Take the best `k` pending follow-ups: by score, best first, ties by text.
    pub fn take_best(&mut self, k: usize) -> Vec<FollowUp> {
        let mut order: Vec<usize> = (0..self.pending.len()).collect();
        order.sort_by(|&a, &b| {
            let (fa, fb) = (&self.pending[a], &self.pending[b]);
            self.pending_score(fb).total_cmp(&self.pending_score(fa)).then(fa.query.cmp(&fb.query)).then(a.cmp(&b))
        });
        let mut taken: Vec<usize> = order.into_iter().take(k).collect();
        let picked: Vec<FollowUp> = taken.iter().map(|&i| self.pending[i].clone()).collect();
        taken.sort_unstable_by(|a, b| b.cmp(a));
        for i in taken {
            self.pending.remove(i);
        }
        picked
    }

    /// Add the answer of follow-up `f` as a node (with its edge); returns the node id.
    pub fn add_answer(&mut self, f: &FollowUp, answer: Option<String>, score: Option<f32>) -> usize {
        let depth = self.nodes[f.parent].depth + 1;
        self.nodes.push(Node { query: f.query.clone(), answer, score, depth });
        let id = self.nodes.len() - 1;
        self.edges.push((f.parent, id));
        id
    }

    /// Nodes with an answer, best score first, ties by node id.
    pub fn answered(&self) -> Vec<(usize, &Node)> {
        let mut v: Vec<(usize, &Node)> = self.nodes.iter().enumerate().filter(|(_, n)| n.answer.is_some()).collect();
        v.sort_by(|a, b| b.1.score.unwrap_or(0.0).total_cmp(&a.1.score.unwrap_or(0.0)).then(a.0.cmp(&b.0)));
        v
    }

    /// The follow-ups never answered, best first.
    pub fn unanswered(&self) -> Vec<Value> {
        let mut rest = self.clone();
        let n = rest.pending.len();
        rest.take_best(n)
            .into_iter()
            .map(|f| json!({"query": f.query, "parent": f.parent, "score": self.pending_score(&f)}))
            .collect()
    }

    /// `{"nodes": [{"id", "query", "answer", "score", "depth"}], "edges": [[parent, child]]}`.
    pub fn to_json(&self) -> Value {
        let nodes: Vec<Value> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(id, n)| json!({"id": id, "query": n.query, "answer": n.answer, "score": n.score, "depth": n.depth}))
            .collect();
        let edges: Vec<Value> = self.edges.iter().map(|&(a, b)| json!([a, b])).collect();
        json!({"nodes": nodes, "edges": edges})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn follow_ups_inherit_scores_and_are_not_asked_twice() {
        let mut s = QueryState::new("What is X?");
        s.answer_root("root".into(), 40.0);
        assert_eq!(s.propose(0, &strings(&["b?", "A?", "what is x", "a", " "])), 2);
        let first = s.take_best(1);
        assert_eq!(first[0].query, "A?", "equal scores: by text");
        let n = s.add_answer(&first[0], Some("ans".into()), Some(90.0));
        assert_eq!(s.nodes[n].depth, 1);
        s.propose(n, &strings(&["z?", "B"]));
        let next = s.take_best(5);
        assert_eq!(next.iter().map(|f| f.query.as_str()).collect::<Vec<_>>(), ["z?", "b?"], "child of 90 first");
        assert!(s.take_best(3).is_empty());
        assert_eq!(s.edges, [(0, 1)]);
        let answered: Vec<usize> = s.answered().iter().map(|x| x.0).collect();
        assert_eq!(answered, [1, 0]);
        assert_eq!(s.to_json()["nodes"].as_array().unwrap().len(), 2);
    }
}
