#!/usr/bin/env python3
"""The reference of bench/list: `lcp list --json --tools FOLDER` written with
Python's own ast module, for a flat folder of tool files.

Usage: reference_list.py PYSRC_TESTDATA FOLDER

It reads the top-level *.py files of FOLDER in byte order of their names
(skipping dot files and __init__.py, as discovery does), extracts their
tools with pysrc/testdata/reference_extract.py (SPEC section 5 with ast),
keeps the first tool of each name, and prints the specs as lcp does: a JSON
array indented by two spaces, non-ASCII characters as they are.
"""

import json
import os
import sys


def main(testdata, folder):
    sys.path.insert(0, testdata)
    import reference_extract

    names = sorted(os.fsencode(n) for n in os.listdir(folder))
    seen = set()
    specs = []
    for name in names:
        name = os.fsdecode(name)
        if name.startswith(".") or name == "__init__.py" or not name.endswith(".py"):
            continue
        path = os.path.join(folder, name)
        if not os.path.isfile(path):
            continue
        for tool in reference_extract.extract(path)["tools"]:
            if tool["name"] not in seen:
                seen.add(tool["name"])
                specs.append(tool)
    sys.stdout.write(json.dumps(specs, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
