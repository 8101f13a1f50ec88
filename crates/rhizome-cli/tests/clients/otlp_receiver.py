"""An OTLP/HTTP trace receiver for tests: listens on 127.0.0.1 (a free port, printed as
the first line of stdout), parses each POST to /v1/traces as an
`ExportTraceServiceRequest` with the official opentelemetry-proto messages (protobuf
binary, or JSON by its content type) and appends every span it got to OUT_FILE, one JSON
object a line: trace_id, span_id, parent_span_id (hex), name, kind, attributes, service.
Usage: otlp_receiver.py OUT_FILE"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

OUT = sys.argv[1]


def value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/v1/traces":
            self.send_response(404)
            self.end_headers()
            return
        req = ExportTraceServiceRequest()
        if "json" in (self.headers.get("Content-Type") or ""):
            json_format.Parse(body, req)
        else:
            req.ParseFromString(body)
        lines = []
        for rs in req.resource_spans:
            resource = {kv.key: value(kv.value) for kv in rs.resource.attributes}
            for ss in rs.scope_spans:
                for s in ss.spans:
                    lines.append(json.dumps({
                        "trace_id": s.trace_id.hex(),
                        "span_id": s.span_id.hex(),
                        "parent_span_id": s.parent_span_id.hex(),
                        "name": s.name,
                        "kind": s.kind,
                        "start": s.start_time_unix_nano,
                        "end": s.end_time_unix_nano,
                        "attributes": {kv.key: value(kv.value) for kv in s.attributes},
                        "status": s.status.code,
                        "service": resource.get("service.name"),
                    }))
        with open(OUT, "a") as f:
            for line in lines:
                f.write(line + "\n")
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
