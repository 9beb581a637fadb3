#!/usr/bin/env python3
"""Checks the daemon's real answers against its OpenAPI document, with the tools the
convention's owners ship: openapi-spec-validator for the document itself, jsonschema
(Draft 2020-12) for every answer's body and every event's envelope and data.

Usage: check_contract.py OPENAPI.json EXCHANGES.jsonl
Each exchange line: {"method", "path" (the route, with {params}), "status", "content_type", "body"}.
Prints one line per problem and exits 1 when there is any; also fails when an operation of the
document was never exercised, or an exchange's route or status is not in the document.
"""
import json, sys
from openapi_spec_validator import validate
from jsonschema import Draft202012Validator

spec = json.load(open(sys.argv[1]))
validate(spec)  # raises on an invalid OpenAPI 3.1 document
by_id = {}
for name, schema in spec["components"]["schemas"].items():
    if "$id" in schema:
        by_id[schema["$id"]] = name

def check(schema, value, where):
    # Validated inside a copy of the document's components, so "#/components/..." resolves.
    wrapped = {"$schema": "https://json-schema.org/draft/2020-12/schema", "components": spec["components"], **schema}
    errors = sorted(Draft202012Validator(wrapped).iter_errors(value), key=lambda e: list(e.path))
    return [f"{where}: {'/'.join(map(str, e.path)) or '(root)'}: {e.message}" for e in errors[:5]]

problems = []
exercised = set()
events = 0
for line in open(sys.argv[2]):
    x = json.loads(line)
    where = f"{x['method']} {x['path']} -> {x['status']}"
    operation = spec["paths"].get(x["path"], {}).get(x["method"].lower())
    if operation is None:
        problems.append(f"{where}: not in the document")
        continue
    exercised.add((x["method"].lower(), x["path"]))
    response = operation["responses"].get(str(x["status"]))
    if response is None:
        problems.append(f"{where}: status not documented for this operation")
        continue
    content = response.get("content", {})
    media = (x.get("content_type") or "").split(";")[0]
    if content and media not in content:
        problems.append(f"{where}: content type {media!r} not documented ({', '.join(content)})")
        continue
    if media != "application/json":
        continue
    body = json.loads(x["body"])
    problems += check(content[media]["schema"], body, where)
    for event in body.get("events", []) if isinstance(body, dict) and x["path"] == "/v1/events" else []:
        events += 1
        problems += check({"$ref": "#/components/schemas/CloudEvent"}, event, f"{where} event {event.get('type')}")
        name = by_id.get(event.get("dataschema"))
        if name is None:
            problems.append(f"{where}: event {event.get('type')}: dataschema {event.get('dataschema')!r} names no schema")
        else:
            problems += check({"$ref": f"#/components/schemas/{name}"}, event["data"], f"{where} {event['type']} data")
for path, operations in spec["paths"].items():
    for method in operations:
        if (method, path) not in exercised:
            problems.append(f"{method.upper()} {path}: documented but never exercised")
for p in problems:
    print(p)
print(f"checked against {sys.argv[1]}: {len(exercised)} operations, {events} events, {len(problems)} problems")
sys.exit(1 if problems else 0)
