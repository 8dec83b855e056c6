#!/usr/bin/env python3
"""gen_kserve_schemas.py - writes the JSON schemas of KServe's ServingRuntime and InferenceService that
deploy/check_deploy.py validates deploy/kserve/*.yaml against (vendored: deploy/schemas/*.schema.json).

The schemas are derived from the OpenAPI-generated model classes of the `kserve` Python SDK (PyPI), which carry every
field of the CRDs (openapi_types: field -> type, attribute_map: field -> JSON key, and setters that refuse None for the
required ones), and of the `kubernetes` Python client for the core types they embed (V1Container, V1ObjectMeta, ...).
The source files are parsed, not imported (importing kserve pulls in its whole server stack). Every object is closed
(additionalProperties: false), as `kubectl apply` (strict field validation) refuses unknown fields; required fields are
required; types are string / integer / boolean / number / array / map; "object" (e.g. IntOrString) is any value.

Refresh (PyPI only; versions as in deploy/schemas/SOURCE.md):
    python3 -m venv /tmp/ks && /tmp/ks/bin/pip install --no-deps kserve==0.21.0 kubernetes==33.1.0
    python3 deploy/schemas/gen_kserve_schemas.py /tmp/ks/lib/python3.*/site-packages deploy/schemas
"""
import ast
import glob
import json
import os
import re
import sys

ROOTS = [("serving.kserve.io/v1alpha1", "ServingRuntime", "V1alpha1ServingRuntime"),
         ("serving.kserve.io/v1beta1", "InferenceService", "V1beta1InferenceService")]
PRIMITIVES = {"str": {"type": "string"}, "int": {"type": "integer"}, "bool": {"type": "boolean"},
              "float": {"type": "number"}, "datetime": {"type": "string"}, "date": {"type": "string"},
              "object": {}}
UNRESOLVED = set()


def index_classes(site):
    """Maps class name -> (openapi_types, attribute_map, required JSON keys) for every generated model file."""
    out = {}
    files = glob.glob(os.path.join(site, "kserve", "models", "*.py")) + \
        glob.glob(os.path.join(site, "kubernetes", "client", "models", "*.py"))
    for path in files:
        src = open(path, encoding="utf-8").read()
        tree = ast.parse(src)
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            types = amap = None
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                    if stmt.targets[0].id == "openapi_types":
                        types = ast.literal_eval(stmt.value)
                    elif stmt.targets[0].id == "attribute_map":
                        amap = ast.literal_eval(stmt.value)
            if types is None or amap is None:
                continue
            required = sorted(amap[f] for f in re.findall(r"Invalid value for `(\w+)`, must not be `None`", src)
                              if f in amap)
            out[node.name] = (types, amap, required)
    return out


def type_schema(t, classes, defs):
    t = t.strip()
    if t in PRIMITIVES:
        return dict(PRIMITIVES[t])
    m = re.fullmatch(r"list\[(.+)\]", t)
    if m:
        return {"type": "array", "items": type_schema(m.group(1), classes, defs)}
    m = re.fullmatch(r"dict\(str, (.+)\)", t)
    if m:
        return {"type": "object", "additionalProperties": type_schema(m.group(1), classes, defs)}
    # K8sIoApiAppsV1DeploymentStrategy = V1DeploymentStrategy
    m = re.fullmatch(r"K8sIoApi[A-Z][a-z]+(V\d+)([A-Z]\w+)", t)
    if m and m.group(1) + m.group(2) in classes:
        t = m.group(1) + m.group(2)
    if t in ("ResourceQuantity", "V1beta1MetricQuantity"):  # Kubernetes quantities: "500m", "1Gi", 2
        return {"type": ["string", "integer", "number"]}
    if t not in classes:  # referenced by the SDK but not shipped with it (kserve 0.21.0: V1alpha1WorkerSpec)
        UNRESOLVED.add(t)
        return {"description": f"{t}: not in the SDK, not checked"}
    if t not in defs:
        defs[t] = None  # placeholder: breaks cycles
        types, amap, required = classes[t]
        props = {amap[f]: type_schema(ft, classes, defs) for f, ft in sorted(types.items())}
        d = {"type": "object", "properties": props, "additionalProperties": False}
        if required:
            d["required"] = required
        defs[t] = d
    return {"$ref": f"#/$defs/{t}"}


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: gen_kserve_schemas.py SITE_PACKAGES OUT_DIR")
    site, out_dir = sys.argv[1], sys.argv[2]
    classes = index_classes(site)
    for api, kind, cls in ROOTS:
        defs = {}
        root = type_schema(cls, classes, defs)
        top = dict(defs[cls])
        top["properties"] = dict(top["properties"], apiVersion={"const": api}, kind={"const": kind})
        top["required"] = sorted(set(top.get("required", [])) | {"apiVersion", "kind", "metadata", "spec"})
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                  "title": f"{kind} ({api}), derived from the kserve and kubernetes Python SDKs' models",
                  **top, "$defs": defs}
        assert root["$ref"].endswith(cls)
        schema["description"] = "Types the SDK names but does not ship, left unchecked: " + \
            (", ".join(sorted(UNRESOLVED)) or "none")
        path = os.path.join(out_dir, f"{kind.lower()}.schema.json")
        with open(path, "w") as f:
            json.dump(schema, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote {path} ({len(defs)} types)")


if __name__ == "__main__":
    main()
