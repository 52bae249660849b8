#!/usr/bin/env bash
# What a binary pays at exec, old single binary against the new CLI
# (make bench-start; ARCHITECTURE.md, "Two binaries"):
#
#   test/bench/startbench.sh OLD_BIN NEW_BIN CORPUS_PROJECTS [RUNS]
#
# OLD_BIN is a tollgate built with the desktop tags (GTK and WebKit linked),
# NEW_BIN the command-line build. For each of three commands — `version`,
# `hook claude-code` on a PreCompact input while no tollgate runs (the
# fail-open path a harness takes on every compaction), and a second
# `import` of an unchanged corpus (CORPUS_PROJECTS, a Claude Code projects
# folder: make bench-import builds one in build/bench-import) — it runs the
# two binaries alternately RUNS times (default 7) under /usr/bin/time and
# prints the medians of wall time and peak RSS, and new/old.
#
# The machine may be shared: only the ratios of one run mean anything.
set -euo pipefail
OLD=$(realpath "${1:?usage: startbench.sh OLD_BIN NEW_BIN CORPUS_PROJECTS [RUNS]}")
NEW=$(realpath "${2:?usage: startbench.sh OLD_BIN NEW_BIN CORPUS_PROJECTS [RUNS]}")
CORPUS=$(realpath "${3:?usage: startbench.sh OLD_BIN NEW_BIN CORPUS_PROJECTS [RUNS]}")
RUNS=${4:-7}
[ -x /usr/bin/time ] || { echo "startbench: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
[ -d "$CORPUS" ] || { echo "startbench: $CORPUS is not a folder (run make bench-import first)" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

HOOK_INPUT='{"session_id":"startbench","transcript_path":"/nonexistent/startbench.jsonl","cwd":"/tmp","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":""}'

# Each binary imports the corpus once into a home of its own; the timed
# imports then find every file unchanged.
for which in old new; do
  bin=$OLD; [ "$which" = new ] && bin=$NEW
  "$bin" import --home "$TMP/home-$which" --harness claude-code "$CORPUS" >/dev/null 2>&1
done

# measure WHICH NAME CMD…: one run; appends "wall_seconds max_rss_kb". The
# wall time is bash's microsecond clock around /usr/bin/time (whose own %e
# counts in 10 ms steps), so it includes time's fork, the same for both.
measure() {
  local which=$1 name=$2 t0 t1
  shift 2
  t0=$EPOCHREALTIME
  /usr/bin/time -f '%M' -o "$TMP/t" "$@" >/dev/null 2>"$TMP/err" </dev/stdin || {
    echo "startbench: $name ($which) failed: $(cat "$TMP/err")" >&2
    exit 1
  }
  t1=$EPOCHREALTIME
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }') $(cat "$TMP/t")" >>"$TMP/$name.$which"
}

for _ in $(seq "$RUNS"); do
  for which in old new; do
    bin=$OLD; [ "$which" = new ] && bin=$NEW
    measure "$which" version "$bin" version </dev/null
    measure "$which" hook env TOLLGATE_HOME="$TMP/nohome-$which" "$bin" hook claude-code <<<"$HOOK_INPUT"
    measure "$which" reimport "$bin" import --home "$TMP/home-$which" --harness claude-code "$CORPUS" </dev/null
  done
done

median() { sort -g | awk '{v[NR] = $1} END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%d alternating runs each; medians (old: %s, %s; new: %s, %s)\n\n' "$RUNS" \
  "$OLD" "$(ldd "$OLD" | wc -l) libraries" "$NEW" "$(ldd "$NEW" | wc -l) libraries"
printf '| %-48s | %9s | %9s | %7s | %11s | %11s | %7s |\n' "" "old wall" "new wall" "new/old" "old RSS" "new RSS" "new/old"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..50})" -----------  ----------- --------- ------------- ------------- ---------
for name in version hook reimport; do
  case $name in
  version) label='`tollgate version`' ;;
  hook) label='`tollgate hook claude-code`, no tollgate running' ;;
  reimport) label='`tollgate import`, corpus unchanged' ;;
  esac
  ow=$(cut -d' ' -f1 "$TMP/$name.old" | median)
  nw=$(cut -d' ' -f1 "$TMP/$name.new" | median)
  orss=$(cut -d' ' -f2 "$TMP/$name.old" | median)
  nrss=$(cut -d' ' -f2 "$TMP/$name.new" | median)
  awk -v l="$label" -v ow="$ow" -v nw="$nw" -v o="$orss" -v n="$nrss" 'BEGIN {
    printf "| %-48s | %8.4fs | %8.4fs | %6.2f× | %8.1f MB | %8.1f MB | %6.2f× |\n", l, ow, nw, (ow > 0 ? nw / ow : 0), o / 1024, n / 1024, n / o }'
done
