#!/usr/bin/env python3
"""Prints ast.unparse of the value of every expression, assignment and
return statement, and of every parameter default and annotation, of the
files named on stdin, one JSON line per file: [[line, col, text], ...]."""
import ast
import json
import sys
import warnings

warnings.filterwarnings("ignore")
if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)

def items(tree):
    out = []
    for n in ast.walk(tree):
        if isinstance(n, (ast.Expr, ast.Assign, ast.AnnAssign, ast.Return, ast.AugAssign)) and n.value is not None:
            out.append((n.lineno, n.col_offset, ast.unparse(n.value)))
        elif isinstance(n, ast.arg) and n.annotation is not None:
            out.append((n.annotation.lineno, n.annotation.col_offset, ast.unparse(n.annotation)))
        elif isinstance(n, ast.arguments):
            for d in n.defaults + [d for d in n.kw_defaults if d is not None]:
                out.append((d.lineno, d.col_offset, ast.unparse(d)))
    out.sort()
    return out

for path in sys.stdin.read().split("\n"):
    if not path:
        continue
    try:
        src = open(path, encoding="utf-8-sig").read()
        tree = ast.parse(src)
        res = items(tree)
    except Exception:
        res = None
    sys.stdout.write(json.dumps(res) + "\n")
