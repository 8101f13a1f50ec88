"""The official MCP Python SDK against Rhizome, over stdio or streamable HTTP.

    mcp_client.py stdio RHIZOME_BINARY INDEX [ARGS...]   (the server is `rhizome ... mcp`)
    mcp_client.py stdio-new RHIZOME_BINARY INDEX         (an index not created yet: status only)
    mcp_client.py http URL KEY
    mcp_client.py http-ro URL KEY                       (a read-only key)
    mcp_client.py command PROGRAM [ARGS...]             (any command that serves MCP on stdio)

Prints one JSON object with what each step got; the Rust test asserts on it.
"""

import asyncio
import base64
import json
import os
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

VI = "Aage Bohr có những giải thưởng gì?"
ZH = "Sam Altman领导的公司在AI领域有什么重要投资？"
NOTE = "The ferry Nordlys leaves Brønnøysund harbour at 06:40 every morning for the Vega islands."


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def call(client, name, args, progress=None):
    """A tool's result; with `progress` (a list), the progress notifications it sent."""
    callback = None
    if progress is not None:

        async def callback(done, total, message):
            progress.append({"progress": done, "total": total, "message": message})

    r = await client.call_tool(name, args, progress_callback=callback)
    return {"error": bool(r.is_error), "text": text_of(r)}


async def read_resources(client, out):
    """The resources listed; the text of the first document and of the first community report."""
    resources = await client.list_resources()
    out["resources"] = [r.uri for r in resources.resources]
    doc = next(r.uri for r in resources.resources if r.uri.startswith("rhizome://documents/"))
    read = await client.read_resource(doc)
    out["resource_text"] = read.contents[0].text[:200]
    report = next((r.uri for r in resources.resources if r.uri.startswith("rhizome://communities/")), None)
    if report:
        read = await client.read_resource(report)
        out["report_text"] = read.contents[0].text[:200]


async def session(client, out, writes):
    tools = await client.list_tools()
    out["tools"] = [t.name for t in tools.tools]
    out["descriptions"] = {t.name: t.description for t in tools.tools}
    # The Vietnamese knowledge is an edge list: a graph without passages, for local search.
    out["answer_vi"] = await call(client, "answer", {"question": VI, "method": "local"})
    out["answer_zh"] = await call(client, "answer", {"question": ZH, "method": "basic"})
    out["search_zh"] = await call(client, "search_passages", {"query": ZH, "top_k": 3})
    out["graph_vi"] = await call(client, "search_graph", {"query": VI, "method": "local", "top_k": 8})
    out["wrong_family"] = await call(client, "search_passages", {"query": VI, "method": "global"})
    out["entity"] = await call(client, "find_entity", {"name": "Aage Bohr"})
    out["documents"] = await call(client, "list_documents", {})
    out["status"] = await call(client, "index_status", {})
    out["bad_filter"] = await call(client, "search_passages", {"query": ZH, "filter": ["colour=red"]})
    # Filters on one line, as the chat header takes them.
    out["filter_line"] = await call(client, "search_passages", {"query": ZH, "top_k": 3, "filter": "lang=zh; source=*"})
    await read_resources(client, out)
    if not writes:
        out["add_refused"] = await call(client, "add_text", {"title": "ferry", "text": NOTE})
        return
    out["add_progress"] = []
    out["add_text"] = await call(client, "add_text", {"title": "ferry timetable", "text": NOTE}, out["add_progress"])
    out["found_added"] = await call(client, "search_passages", {"query": "When does the ferry Nordlys leave?", "top_k": 1})
    csv = "source,relation,target\nNordlys,sails to,Vega\n"
    out["add_file"] = await call(client, "add_file", {"name": "ferry.csv", "content_base64": base64.b64encode(csv.encode()).decode()})
    out["bad_file"] = await call(client, "add_file", {"name": "x.exe", "content_base64": "AAAA"})
    out["delete"] = await call(client, "delete_document", {"document": "upload:ferry timetable"})
    out["after_delete"] = await call(client, "search_passages", {"query": "When does the ferry Nordlys leave?", "top_k": 1})


async def main():
    mode = sys.argv[1]
    out = {"mode": mode}
    # The SDK passes on only a few variables to a server it starts; where the models are is one more.
    env = {k: v for k, v in os.environ.items() if k.startswith("RHIZOME_")}
    if mode == "command":
        params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:], env=env)
        async with Client(params) as client:
            out["server"] = client.server_info.name if client.server_info else None
            tools = await client.list_tools()
            out["tools"] = [t.name for t in tools.tools]
            out["answer"] = await call(client, "answer", {"question": "Who shared the Nobel Prize with Aage Bohr?"})
            out["add_progress"] = []
            out["add_text"] = await call(client, "add_text", {"title": "ferry timetable", "text": NOTE}, out["add_progress"])
            out["found_added"] = await call(client, "search_passages", {"query": "When does the ferry Nordlys leave?", "top_k": 1})
            await read_resources(client, out)
    elif mode in ("stdio", "stdio-new"):
        params = StdioServerParameters(command=sys.argv[2], args=["--index", sys.argv[3], *sys.argv[4:], "mcp"], env=env)
        async with Client(params) as client:
            out["server"] = client.server_info.name if client.server_info else None
            if mode == "stdio-new":
                out["status"] = await call(client, "index_status", {})
            else:
                await session(client, out, writes=True)
    else:
        url, key = sys.argv[2], sys.argv[3]
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
        async with http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                out["server"] = client.server_info.name if client.server_info else None
                await session(client, out, writes=(mode == "http"))
    print(json.dumps(out, ensure_ascii=False))


asyncio.run(main())
