#!/usr/bin/env python3
"""Syntax oracle for the parser's differential test: reads a JSON list of
source texts on stdin and prints a JSON list with, for each, null when
ast.parse accepts it, else the error as "line:col: msg". Standard library
only; Python 3.12 is the reference."""
import ast
import json
import sys
import warnings

warnings.filterwarnings("ignore")
if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)

out = []
for src in json.load(sys.stdin):
    try:
        ast.parse(src)
        out.append(None)
    except SyntaxError as e:
        out.append("%s:%s: %s" % (e.lineno, e.offset, e.msg))
    except (ValueError, RecursionError, MemoryError) as e:
        out.append("0:0: %s" % e)
json.dump(out, sys.stdout)
