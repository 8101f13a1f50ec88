"""The `rhizome` package, installed from its wheel into a fresh virtual environment
(crates/rhizome-cli/tests/python_package.rs sets it up and passes, in the environment, where
the data is and what the CLI measured on the same input)."""

import asyncio
import json
import os
import pathlib
import signal
import statistics
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

import rhizome
import rhizome.models
from rhizome import BadInputError, NotFoundError, QueryResult, Rhizome

MINILM = {"embed.model": "all-MiniLM-L6-v2"}
DOCS = pathlib.Path(os.environ["RHIZOME_TEST_DOCS"])
DATA = pathlib.Path(os.environ["RHIZOME_TEST_DATA"])
QUESTION = "Who shared the Nobel Prize in Physics with Aage Bohr?"
FIGURES = os.environ.get("RHIZOME_TEST_FIGURES_OUT")
OPENIE = "openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json"


@pytest.fixture(scope="session")
def examples(tmp_path_factory):
    rz = Rhizome(tmp_path_factory.mktemp("examples") / "index", settings=MINILM)
    events = []
    result = rz.index(DOCS, progress=events.append)
    assert result.documents_indexed == 3, result.to_dict()
    assert {"start", "advance", "finish"} <= {e.event for e in events}, events
    return rz


def test_import_rhizome_loads_no_framework():
    code = "import sys, rhizome; print(sorted(m for m in sys.modules if m.split('.')[0] in ('langchain_core', 'llama_index')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_method_answers_with_sources(examples):
    methods = [m.name for m in examples.methods()]
    assert {"basic", "hippo", "local", "global", "drift", "tog", "auto"} <= set(methods)
    for method in methods:
        r = examples.query(QUESTION, method)
        assert isinstance(r, QueryResult)
        assert r.answer, method
        assert r.to_dict()["answer"] == r.answer
        for c in r.contexts:
            assert c.source and c.kind, (method, c)
    r = examples.query(QUESTION, "hippo", top_k=3)
    assert "Mottelson" in r.answer, r.answer
    assert r.contexts[0].source.endswith("copenhagen-physics.txt")
    assert r.contexts[0].cite() == r.contexts[0].source
    assert len(r.contexts) <= 3 and r.timings_ms["total"] > 0
    # Per-question settings and filters.
    r = examples.query(QUESTION, "hippo", params={"hippo.damping": 0.6}, filter="source=*plants*")
    assert all(c.source.endswith("rhizome-plants.md") for c in r.contexts if c.kind == "chunk"), r.contexts
    evidence = examples.retrieve(QUESTION, "basic", top_k=2)
    assert len(evidence) == 2 and evidence[0].text


def test_documents_entities_and_the_graph(examples):
    page = examples.documents()
    assert page.total == 3 and {d.title for d in page.documents} >= {"copenhagen-physics"}
    doc = page.documents[0]
    assert doc.meta.get("summary") and doc.meta.get("type"), doc
    full = examples.document(doc.id)
    assert full["document"]["text"]
    found = examples.entities("Aage")
    assert found and found[0].name.startswith("Aage")
    detail = examples.entity("Aage Bohr")
    assert detail.name == "Aage Bohr" and detail.mentions
    graph = examples.neighbourhood("Aage Bohr", depth=1)
    assert graph.nodes and graph.edges
    assert examples.communities()
    stats = examples.stats()
    assert stats.nodes["Document"] == 3 and stats.edges["RELATED"] > 0
    assert any(f["extensions"][0] == "pdf" for f in examples.formats())


def test_texts_in_memory_and_delete(tmp_path):
    rz = Rhizome(tmp_path / "index", settings=MINILM)
    out = rz.index_texts([
        ("ferry", "The ferry Nordlys leaves Brønnøysund at 06:40 for the Vega islands."),
        {"title": "bridge", "text": "The Halvorsen Bridge opened in 1931.", "source": "notes/bridge.txt"},
    ])
    assert out.documents_indexed == 2
    r = rz.query("When does the ferry Nordlys leave?")
    assert r.contexts[0].source == "text:ferry"
    gone = rz.delete("text:ferry")
    assert gone.deleted["documents"] == 1
    r = rz.query("When does the ferry Nordlys leave?")
    assert all(c.source != "text:ferry" for c in r.contexts)
    with pytest.raises(NotFoundError, match="text:ferry"):
        rz.delete("text:ferry")


def test_bad_input_raises_with_the_messages_of_the_cli(examples, tmp_path):
    with pytest.raises(BadInputError, match="unknown method"):
        examples.query(QUESTION, method="nope")
    with pytest.raises(BadInputError, match="colour"):
        examples.query(QUESTION, filter={"colour": "red"})
    with pytest.raises(BadInputError, match="empty"):
        examples.query("   ")
    with pytest.raises(BadInputError, match="nothing to index"):
        Rhizome(tmp_path / "new", settings=MINILM).index(tmp_path / "no-such-folder")
    with pytest.raises(BadInputError, match="retrieval.top_k"):
        Rhizome(tmp_path / "x", settings={"retrieval.top_k": 0})
    with pytest.raises(BadInputError, match="hipporag-openie"):
        examples.import_file("neo4j", DOCS)
    with pytest.raises(BadInputError, match="role"):
        examples.query(QUESTION, history=[("system", "hi")])
    assert issubclass(BadInputError, rhizome.RhizomeError)


def test_serve_answers_over_http_behind_its_key_and_stops(examples):
    key = "py-key-0123456789"
    server = examples.serve(api_keys=[key])

    def post(path, body, key):
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        req = urllib.request.Request(server.url + path, data=json.dumps(body).encode(), headers=headers)
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())

    try:
        assert server.url.startswith("http://127.0.0.1:"), server.url
        r = post("/query", {"question": QUESTION, "method": "basic"}, key)
        assert r["contexts"][0]["source"].endswith("copenhagen-physics.txt"), r
        with pytest.raises(urllib.error.HTTPError) as refused:
            post("/query", {"question": QUESTION}, None)
        assert refused.value.code == 401
    finally:
        server.stop()
    with pytest.raises(OSError):
        urllib.request.urlopen(server.url + "/stats", timeout=5)
    with pytest.raises(BadInputError, match="HOST:PORT"):
        examples.serve("not an address")


def test_mcp_on_stdio_for_the_official_sdk(tmp_path):
    """`Rhizome(...).mcp()` as the command of an MCP client configuration: the official SDK
    (its own venv) starts it, asks, adds a text with a progress callback and finds it."""
    index = tmp_path / "index"
    Rhizome(index, settings=MINILM).index_texts([("bohr", "Aage Bohr shared the 1975 Nobel Prize in Physics with Ben Mottelson.")])
    serve = f"from rhizome import Rhizome; Rhizome({str(index)!r}, settings={MINILM!r}).mcp()"
    client = [os.environ["RHIZOME_TEST_MCP_PYTHON"], os.environ["RHIZOME_TEST_MCP_CLIENT"]]
    out = subprocess.run([*client, "command", sys.executable, "-c", serve], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["server"] == "rhizome" and "add_file" in got["tools"], got
    assert not got["answer"]["error"] and "Mottelson" in got["answer"]["text"], got
    assert "Indexed 1 new document" in got["add_text"]["text"], got
    steps = [p["progress"] for p in got["add_progress"]]
    assert steps and steps == sorted(steps), got["add_progress"]
    assert "upload:ferry timetable" in got["found_added"]["text"], got
    assert any(uri.startswith("rhizome://documents/doc_") for uri in got["resources"]), got


def test_four_threads_run_100_queries(examples):
    questions = [QUESTION, "Where is the Niels Bohr Institute?", "What is a knowledge graph?", "Which plants have rhizomes?"] * 25
    expected = {q: examples.query(q, "hippo").answer for q in set(questions)}
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda q: examples.query(q, "hippo"), questions))
    assert len(results) == 100
    assert all(r.answer == expected[r.question] for r in results)


def test_asyncio_queries(examples):
    async def main():
        return await asyncio.gather(*(examples.aquery(QUESTION, "hippo") for _ in range(8)))

    results = asyncio.run(main())
    assert len({r.answer for r in results}) == 1 and "Mottelson" in results[0].answer


def test_langchain_and_llama_index_retrievers(examples):
    from langchain_core.retrievers import BaseRetriever as LangChainRetriever
    from llama_index.core.retrievers import BaseRetriever as LlamaIndexRetriever

    lc = examples.as_langchain_retriever(method="hippo", top_k=3)
    assert isinstance(lc, LangChainRetriever)
    docs = lc.invoke(QUESTION)
    assert 0 < len(docs) <= 3
    assert docs[0].metadata["source"].endswith("copenhagen-physics.txt") and "Mottelson" in " ".join(d.page_content for d in docs)

    li = examples.as_llama_index_retriever(method="hippo", top_k=3)
    assert isinstance(li, LlamaIndexRetriever)
    nodes = li.retrieve(QUESTION)
    assert 0 < len(nodes) <= 3
    assert nodes[0].node.metadata["source"].endswith("copenhagen-physics.txt") and nodes[0].score is not None


def test_musique_openie_import_and_hippo_eval_equal_the_cli(tmp_path):
    # The whole MuSiQue OpenIE file imported through the package gives the index the CLI's
    # import gives (the shared fixture, same model) and the same hippo recall.
    cli = json.loads(os.environ["RHIZOME_TEST_OPENIE_CLI"])
    rz = Rhizome(tmp_path / "package", settings=MINILM)
    ours = rz.import_file("hipporag-openie", DATA / "musique" / OPENIE)
    assert ours.report["documents_indexed"] == 1890
    assert ours.stats == cli["stats"]
    questions = DATA / "musique/musique_train.json"
    result = rz.eval(questions, "hippo", k=(2, 5))
    assert result.questions == 100
    assert result.recall == cli["recall"]

    full = Rhizome(os.environ["RHIZOME_TEST_OPENIE_INDEX"], settings=MINILM)
    # The binding's cost: each query's wall time in Python against the engine's own time
    # for it (timings_ms.total), the same 100 queries in the same run.
    asked = [q["question"] for q in json.loads(questions.read_text())]
    full.query(asked[0], "hippo")  # warm: graph and embedder loaded
    wall, engine = [], []
    for q in asked:
        t = time.perf_counter()
        r = full.query(q, "hippo", retrieve_only=True)
        wall.append((time.perf_counter() - t) * 1e3)
        engine.append(r.timings_ms["total"])
    p50_wall, p50_engine = statistics.median(wall), statistics.median(engine)
    line = (f"python package, 100 MuSiQue hippo queries on the OpenIE import (MiniLM): p50 {p50_wall:.2f} ms "
            f"through the package, {p50_engine:.2f} ms in the engine; the binding adds {100 * (p50_wall / p50_engine - 1):.1f}%")
    print(line)
    if FIGURES:
        pathlib.Path(FIGURES).write_text(line + "\n")


def test_ctrl_c_stops_an_index_and_keeps_what_was_written(tmp_path):
    index = tmp_path / "corpus"
    # The child gets Ctrl-C as Python at a terminal has it, whatever the runner left it: a
    # job started in the background by a shell ignores SIGINT, and so would the child.
    child = textwrap.dedent(f"""
        import signal, sys
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from rhizome import Rhizome
        rz = Rhizome({str(index)!r}, settings={MINILM!r})
        def progress(p):
            if p.event == "advance":
                print("working", flush=True)
        try:
            rz.import_file("corpus", {str(DATA / 'musique/musique_train_corpus.json')!r}, progress=progress)
            print("finished", flush=True)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            print("documents", Rhizome({str(index)!r}, settings={MINILM!r}).documents().total, flush=True)
    """)
    p = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "working"
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=120)
    lines = out.split("\n")
    assert "interrupted" in lines and p.returncode == 0, out
    written = int(next(line for line in lines if line.startswith("documents")).split()[1])
    assert 0 <= written < 1890, out
    # The index is whole: it opens and answers.
    rz = Rhizome(index, settings=MINILM)
    assert rz.stats().nodes.get("Document", 0) == written


def test_models_are_found_as_the_cli_finds_them():
    listed = rhizome.models.installed()
    names = {m["name"]: m["installed"] for m in listed["models"]}
    assert names.get("all-MiniLM-L6-v2") is True, listed
