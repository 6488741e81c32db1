#!/bin/sh
# Times the Go reader against the Python ast reference on the renamed
# standard library, both as fresh processes (start-up included).
# Usage: bench/reader/run.sh [-python python3.12] [-runs 3] [-corpus DIR]
set -eu
cd "$(dirname "$0")/../.."
bin="${TMPDIR:-/tmp}/lcp-reader-bench"
go build -o "$bin" ./bench/reader
exec "$bin" "$@"
