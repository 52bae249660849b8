#!/usr/bin/env bash
# Window smoke test: the real binary in a real Wails window under Xvfb.
# BIN is the command-line tollgate; it starts the window by exec'ing
# tollgate-window from its own folder.
# Asserts the window is titled "tollgate", the screenshot is not blank, the
# discovery file appears while it runs and disappears on a clean exit.
# Screenshots land in test-output/ — look at them.
set -euo pipefail
BIN=$(realpath "${1:-build/bin/tollgate}")
OUT=${OUT:-test-output}
mkdir -p "$OUT"
HOME_DIR=$(mktemp -d)
LOG="$OUT/window-smoke.log"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$HOME_DIR" "${USER_DIR:-}"
}
trap cleanup EXIT

# A free display number.
for n in $(seq 90 140); do
  [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ] || { DISPLAY_NUM=$n; break; }
done
export DISPLAY=":$DISPLAY_NUM"
Xvfb "$DISPLAY" -screen 0 1280x860x24 -nolisten tcp >"$OUT/xvfb.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done

# A session bus, as a desktop has; WebKitGTK and notifications use it.
eval "$(dbus-launch --sh-syntax)"
pids+=("$DBUS_SESSION_BUS_PID")

# The window's user: a $HOME of its own, with a Downloads folder the save
# dialog opens in.
USER_DIR=$(mktemp -d)
mkdir -p "$USER_DIR/Downloads"

# LANG=C: WebKitGTK then reports navigator.language "C"; the UI must survive it.
HOME="$USER_DIR" LANG=C LC_ALL=C "$BIN" --home "$HOME_DIR" --listen 127.0.0.1:0 >"$LOG" 2>&1 &
APP=$!
pids+=($APP)

for _ in $(seq 150); do [ -s "$HOME_DIR/api.json" ] && break; sleep 0.1; done
[ -s "$HOME_DIR/api.json" ] || { echo "FAIL: api.json never appeared"; cat "$LOG"; exit 1; }
# BIN is the command-line tollgate: with no verb it execs the window binary
# beside it in the same process (the PID the lock and api.json record).
WEXE=$(readlink "/proc/$APP/exe")
[ "$(basename "$WEXE")" = tollgate-window ] || { echo "FAIL: tollgate (no verb) runs $WEXE, not tollgate-window"; exit 1; }
grep -q "\"pid\": *$APP\b" "$HOME_DIR/api.json" || { echo "FAIL: api.json does not record the launched PID $APP"; cat "$HOME_DIR/api.json"; exit 1; }
echo "window binary: $WEXE (pid $APP, exec'd by $BIN)"

WID=""
for _ in $(seq 150); do
  WID=$(xdotool search --name '^tollgate$' 2>/dev/null | head -1 || true)
  [ -n "$WID" ] && break
  sleep 0.2
done
[ -n "$WID" ] || { echo "FAIL: no window titled tollgate"; cat "$LOG"; exit 1; }
TITLE=$(xdotool getwindowname "$WID")
[ "$TITLE" = "tollgate" ] || { echo "FAIL: window title '$TITLE'"; exit 1; }

# Data for the dashboard: the scripted session, through the live API (the
# simulate command finds this tollgate by its api.json), in auto mode.
"$BIN" simulate --home "$HOME_DIR" --window 128k --steps 60 --mode auto >"$OUT/window-simulate.log" 2>&1 \
  || { echo "FAIL: simulate against the window's tollgate"; cat "$OUT/window-simulate.log"; exit 1; }
grep -q "summarizing first cuts" "$OUT/window-simulate.log" || { echo "FAIL: simulate printed no comparison"; exit 1; }

# Give WebKit time to render the page and the live updates.
sleep "${SETTLE:-6}"
SHOT="$OUT/window-smoke.png"
import -window root "$SHOT"
STDDEV=$(identify -format '%[fx:standard_deviation]' "$SHOT")
COLORS=$(identify -format '%k' "$SHOT")
echo "screenshot $SHOT: stddev=$STDDEV colors=$COLORS"
awk -v s="$STDDEV" -v c="$COLORS" 'BEGIN { exit !(s > 0.02 && c > 16) }' || { echo "FAIL: screenshot looks blank"; exit 1; }

# Export from the window: WebKitGTK does not download links, so Export CSV
# opens a save dialog and the window writes the file. Data tab, then Export
# CSV (screen coordinates: the 1200×800 window is centred on the 1280×860
# screen, no window manager moves it), then Return takes the
# proposed name in ~/Downloads.
xdotool mousemove 530 52 click 1
sleep 1.5
xdotool mousemove 243 393 click 1
DID=""
for _ in $(seq 50); do
  DID=$(xdotool search --name '^Export$' 2>/dev/null | head -1 || true)
  [ -n "$DID" ] && break
  sleep 0.2
done
import -window root "$OUT/window-export-dialog.png"
[ -n "$DID" ] || { echo "FAIL: Export CSV opened no save dialog"; exit 1; }
sleep 0.5
xdotool key Return
for _ in $(seq 50); do [ -s "$USER_DIR/Downloads/tollgate.csv" ] && break; sleep 0.2; done
[ -s "$USER_DIR/Downloads/tollgate.csv" ] || { echo "FAIL: the export was not saved"; ls -la "$USER_DIR/Downloads"; exit 1; }
head -1 "$USER_DIR/Downloads/tollgate.csv" | grep -q '^session,requestId,' || { echo "FAIL: the saved export is not the CSV"; head -3 "$USER_DIR/Downloads/tollgate.csv"; exit 1; }
[ "$(wc -l <"$USER_DIR/Downloads/tollgate.csv")" -gt 10 ] || { echo "FAIL: the saved export lacks the simulated requests"; exit 1; }
sleep 1
import -window root "$OUT/window-export-saved.png"
echo "export saved from the window: $(wc -l <"$USER_DIR/Downloads/tollgate.csv") lines"

# A second start on the same home raises the first window and exits 0.
if ! "$BIN" --home "$HOME_DIR" --listen 127.0.0.1:0 >"$OUT/second.log" 2>&1; then
  echo "FAIL: second start exited non-zero"; cat "$OUT/second.log"; exit 1
fi
grep -q "already running" "$OUT/second.log" || { echo "FAIL: second start did not say it found the live one"; cat "$OUT/second.log"; exit 1; }

# Clean exit removes api.json.
kill -TERM "$APP"
for _ in $(seq 100); do kill -0 "$APP" 2>/dev/null || break; sleep 0.1; done
if [ -e "$HOME_DIR/api.json" ]; then echo "FAIL: api.json left after a clean exit"; exit 1; fi
# An invalid config value stops start-up with a message naming the key and
# the value — on stderr and in a window, for users who launched from a menu.
BAD_HOME=$(mktemp -d)
printf 'mode: sometimes\n' >"$BAD_HOME/config.yaml"
"$BIN" --home "$BAD_HOME" >"$OUT/bad-config.log" 2>&1 &
BAD=$!
pids+=($BAD)
BWID=""
for _ in $(seq 100); do
  BWID=$(xdotool search --name '^tollgate$' 2>/dev/null | head -1 || true)
  [ -n "$BWID" ] && break
  sleep 0.2
done
[ -n "$BWID" ] || { echo "FAIL: no error window for an invalid config"; cat "$OUT/bad-config.log"; exit 1; }
grep -q 'mode: sometimes: want ask, auto or off' "$OUT/bad-config.log" || { echo "FAIL: the error does not name key and value"; cat "$OUT/bad-config.log"; exit 1; }
sleep 2
import -window root "$OUT/window-bad-config.png"
kill "$BAD" 2>/dev/null || true
rm -rf "$BAD_HOME"
echo "window smoke: ok"
