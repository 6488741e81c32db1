#!/usr/bin/env python3
"""Reference implementation of SPEC §5 with Python's own ast module.

Standard library only. Used by the Go differential test and by
bench/reader to measure the Go reader against Python.

Usage: reference_extract.py FILE...   (or one path per line on stdin with -)
Prints one JSON line per file:
  {"file": F, "python": "3.12", "status": "ok"|"syntax"|"skip", "tools": [...]}
with every tool_* function in source order of its def line (no dedup).
Tools of files that ast.parse rejects come from a regex fallback and are
marked "_parsed_via_regex_fallback": true (only their names matter).
"""

import ast
import json
import math
import re
import sys
import warnings

warnings.filterwarnings("ignore")

if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)

HIDDEN = {
    "args", "kwargs", "tool_context", "lollms_client_instance",
    "discussion_instance", "user_interaction_handler",
    "progress_handler", "log_handler",
}
PARAM_RE = re.compile(r'^(?:[-\*\d\.]+\s*)?([a-zA-Z0-9_]+)\s*(?:\(([^)]+)\))?\s*[:\-]\s*(.+)')
PROMPT_RE = re.compile(r'^tool_.+_prompt$')
FALLBACK_RE = re.compile(r'^\s*(async\s+)?def\s+(tool_\w+)\s*\(')


def json_ok(v):
    if v is None or isinstance(v, (bool, str, int)):
        return True
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, (list, tuple)):
        return all(json_ok(x) for x in v)
    if isinstance(v, dict):
        return all(isinstance(k, str) and json_ok(x) for k, x in v.items())
    return False


def default_value(node):
    try:
        v = ast.literal_eval(node)
    except Exception:
        v = ...
    if v is not ... and json_ok(v):
        return v
    return ast.unparse(node).strip("'\"")


def json_type(annotation):
    a = annotation.lower()
    if "int" in a:
        return "integer"
    if "float" in a or "number" in a:
        return "number"
    if "bool" in a:
        return "boolean"
    if "list" in a or "array" in a:
        return "array"
    if "dict" in a or "object" in a:
        return "object"
    return "string"


def tool_schema(fn):
    doc = ast.get_docstring(fn) or ""
    if doc:
        description = doc.strip().split("\n\n")[0].strip()
    else:
        description = "No description provided."
    docs = {}
    for line in doc.splitlines():
        m = PARAM_RE.match(line.strip())
        if m:
            docs[m.group(1)] = m.group(3).strip()
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    pairs = list(zip(positional, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults))
    properties = {}
    required = []
    for arg, default in pairs:
        name = arg.arg
        if name in HIDDEN:
            continue
        prop = {"type": json_type(ast.unparse(arg.annotation)) if arg.annotation else "string",
                "description": docs.get(name, f"Parameter '{name}'")}
        if default is not None:
            prop["default"] = default_value(default)
        else:
            required.append(name)
        properties[name] = prop
    return {"name": fn.name, "description": description,
            "input_schema": {"type": "object", "properties": properties, "required": required}}


def fallback(text):
    tools = []
    for line in text.splitlines():
        m = FALLBACK_RE.match(line)
        if m and not PROMPT_RE.match(m.group(2)):
            tools.append({"name": m.group(2), "_parsed_via_regex_fallback": True})
    return tools


def extract(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
        text = raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return {"status": "skip", "tools": []}
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return {"status": "syntax", "tools": fallback(text)}
    fns = [n for n in ast.walk(tree)
           if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
           and n.name.startswith("tool_") and not PROMPT_RE.match(n.name)]
    fns.sort(key=lambda n: (n.lineno, n.col_offset))
    tools = []
    for fn in fns:
        try:
            tools.append(tool_schema(fn))
        except RecursionError:
            return {"status": "skip", "tools": []}
    return {"status": "ok", "tools": tools}


def main(argv):
    paths = argv[1:]
    if paths == ["-"]:
        paths = [line.rstrip("\n") for line in sys.stdin]
    version = "%d.%d" % sys.version_info[:2]
    out = sys.stdout
    for path in paths:
        r = extract(path)
        r = {"file": path, "python": version, **r}
        out.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main(sys.argv)
