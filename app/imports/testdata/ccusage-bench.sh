#!/bin/sh
# Runs BenchmarkImport with ccusage 20 beside it: installs ccusage@20.0.24
# into a temporary folder outside the repository (npm), then lets the Go
# benchmark generate a ~300 MB Claude Code corpus and time, in each
# iteration, `ccusage session --json --offline` (CLAUDE_CONFIG_DIR pointing
# at the corpus) and tollgate's import of the same files into a fresh
# database. It reports MB/s for both and x-ccusage = ccusage time / ours.
#
#   sh app/imports/testdata/ccusage-bench.sh [benchtime, default 3x]
#   TOLLGATE_BENCH_MB=100 sh app/imports/testdata/ccusage-bench.sh 1x
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm init -y >/dev/null && npm install --silent ccusage@20.0.24 >/dev/null)
export CCUSAGE="$tmp/node_modules/.bin/ccusage"
"$CCUSAGE" --version
cd "$root"
go test -run '^$' -bench '^BenchmarkImport$' -benchtime "${1:-3x}" -timeout 30m ./app/imports/
