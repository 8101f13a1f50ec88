//! `rhizome copy` between SQLite indexes (every table equal afterwards, answers equal) and
//! `rhizome export` read back by independent parsers (Python's xml.etree and csv): every
//! node and edge the index counts is in the files, every edge's ends are nodes.
//! The same copy into PostgreSQL and FalkorDB is in backends.rs.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod support;

use support::{assert_same_index, examples, json, ok, rz, stats};

fn contexts(index: &Path, method: &str, q: &str) -> Vec<String> {
    let mut c = rz(index);
    c.args(["query", q, "--method", method]);
    let v = json(c);
    v["contexts"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap_or_default().to_string()).collect()
}

#[test]
fn copy_makes_the_same_index_and_refuses_a_store_that_is_not_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let mut c = rz(&a);
    c.arg("index").arg(examples());
    ok(c);
    let mut c = rz(&a);
    c.args(["copy", "--to"]).arg(&b);
    let out = json(c);
    assert_eq!(out["documents"], 3, "{out:#}");
    assert_same_index(&b, &a, "a copy equals its original");
    assert_eq!(stats(&b), stats(&a));
    let q = "Who shared the Nobel Prize in Physics with Aage Bohr?";
    for m in ["basic", "hippo", "local", "global", "multihop"] {
        assert_eq!(contexts(&b, m, q), contexts(&a, m, q), "{m} answers from the copy as from the original");
    }
    // A second copy into the same place is refused, naming it; nothing changes there.
    let mut c = rz(&a);
    c.args(["copy", "--to"]).arg(&b);
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("already holds 3 documents") && err.contains("empty store"), "{err}");
    assert_same_index(&b, &a, "a refused copy writes nothing");
    // --from names the source; copying an index onto itself is refused.
    let mut c = rz(tmp.path().join("unused").as_path());
    c.arg("copy").arg("--from").arg(&a).arg("--to").arg(&a);
    let out = c.output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("is the index being copied"));
}

fn python(script: &str, args: &[&Path]) -> Value {
    let out = Command::new("python3").arg("-c").arg(script).args(args).output().expect("python3");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

const READ_GRAPHML: &str = r#"
import json, sys, collections
import xml.etree.ElementTree as ET
ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
root = ET.parse(sys.argv[1]).getroot()
keys = {k.get("id"): k.get("attr.name") for k in root.findall("g:key", ns)}
g = root.find("g:graph", ns)
nodes, labels = set(), collections.Counter()
for n in g.findall("g:node", ns):
    nodes.add(n.get("id"))
    d = {keys[x.get("key")]: x.text for x in n.findall("g:data", ns)}
    labels[d["label"]] += 1
types, dangling = collections.Counter(), 0
for e in g.findall("g:edge", ns):
    d = {keys[x.get("key")]: x.text for x in e.findall("g:data", ns)}
    types["RELATED" if "rel_type" in d else d["type"]] += 1
    dangling += (e.get("source") not in nodes) + (e.get("target") not in nodes)
print(json.dumps({"labels": labels, "types": types, "dangling": dangling, "nodes": len(nodes)}))
"#;

const READ_NEO4J_CSV: &str = r#"
import csv, json, sys, os, collections
d = sys.argv[1]
ids, labels = set(), collections.Counter()
dups = 0
for f in ["documents.csv", "chunks.csv", "entities.csv", "facts.csv"]:
    with open(os.path.join(d, f), newline="", encoding="utf-8") as fh:
        r = csv.DictReader(fh)
        assert r.fieldnames[0] == "id:ID" and r.fieldnames[-1] == ":LABEL", r.fieldnames
        for row in r:
            dups += row["id:ID"] in ids
            ids.add(row["id:ID"])
            for l in row[":LABEL"].split(";"):
                labels[l] += 1
types, dangling = collections.Counter(), 0
with open(os.path.join(d, "relationships.csv"), newline="", encoding="utf-8") as fh:
    r = csv.DictReader(fh)
    assert r.fieldnames[:3] == [":START_ID", ":END_ID", ":TYPE"], r.fieldnames
    for row in r:
        types["RELATED" if row["rel_type"] else row[":TYPE"]] += 1
        dangling += (row[":START_ID"] not in ids) + (row[":END_ID"] not in ids)
print(json.dumps({"labels": labels, "types": types, "dangling": dangling, "dups": dups,
                  "script": open(os.path.join(d, "import.sh")).read()}))
"#;

#[test]
fn export_writes_every_node_and_edge_for_gephi_and_neo4j() {
    let tmp = tempfile::tempdir().unwrap();
    let idx = tmp.path().join("idx");
    let mut c = rz(&idx);
    c.arg("index").arg(examples());
    ok(c);
    let st = stats(&idx);
    let n = |k: &str| st["nodes"][k].as_u64().unwrap();
    let e = |k: &str| st["edges"][k].as_u64().unwrap();

    let file = tmp.path().join("out/graph.graphml");
    let mut c = rz(&idx);
    c.args(["export", "--format", "graphml", "--out"]).arg(&file);
    ok(c);
    let g = python(READ_GRAPHML, &[&file]);
    for l in ["Document", "Chunk", "Entity", "Fact"] {
        assert_eq!(g["labels"][l].as_u64().unwrap_or(0), n(l), "{l} nodes in the GraphML: {g}");
    }
    for t in ["PART_OF", "NEXT_CHUNK", "MENTIONED_IN", "RELATED", "SYNONYM", "SIMILAR_TO"] {
        assert_eq!(g["types"][t].as_u64().unwrap_or(0), e(t), "{t} edges in the GraphML: {g}");
    }
    assert_eq!(g["types"]["SUBJECT"].as_u64().unwrap(), n("Fact"));
    assert_eq!(g["dangling"], 0, "every edge joins two exported nodes");

    let dir = tmp.path().join("neo4j");
    let mut c = rz(&idx);
    c.args(["export", "--format", "neo4j-csv", "--out"]).arg(&dir);
    ok(c);
    let v = python(READ_NEO4J_CSV, &[&dir]);
    assert_eq!(v["dups"], 0);
    assert_eq!(v["dangling"], 0, "every relationship joins two exported nodes");
    assert_eq!(v["labels"]["__Entity__"].as_u64().unwrap(), n("Entity"));
    assert_eq!(v["labels"]["Chunk"].as_u64().unwrap(), n("Chunk"));
    for t in ["PART_OF", "MENTIONED_IN", "RELATED", "SIMILAR_TO"] {
        assert_eq!(v["types"][t].as_u64().unwrap_or(0), e(t), "{t} relationships in the CSV: {v}");
    }
    assert!(v["script"].as_str().unwrap().contains("neo4j-admin database import full"));

    // An unknown format is named with the ones there are.
    let mut c = rz(&idx);
    c.args(["export", "--format", "dot", "--out"]).arg(tmp.path().join("x"));
    let out = c.output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("use graphml (Gephi) or neo4j-csv"));
}
