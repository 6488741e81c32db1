#!/bin/sh
# Times `lcp version` against a hello-world Go program built in the same run
# (as `go build` and as the release build), fresh processes, alternating;
# prints medians of wall, CPU and page faults, ratios and the slowest package
# initializers.
# Usage: bench/startup/run.sh [-runs 200] [-before OLD_LCP] [-args "version"]
set -eu
cd "$(dirname "$0")/../.."
exec go run ./bench/startup "$@"
