"""A Prometheus scrape parsed by the official client's parser. Reads the exposition text
on stdin; prints {family: {"type", "samples": [{"name", "labels", "value"}]}} as JSON."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

out = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    out[family.name] = {
        "type": family.type,
        "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in family.samples],
    }
print(json.dumps(out))
