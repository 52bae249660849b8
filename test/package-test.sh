#!/usr/bin/env bash
# Package test (make test-package): the Debian package make package built.
#
#   test/package-test.sh BIN WINDOW_BIN OUTDIR
#
# The package ships two binaries: /usr/bin/tollgate (no GTK linked) and the
# window, /usr/lib/tollgate/tollgate-window, which `tollgate` execs.
#
# 1. control fields, the exact file list, owners and modes;
# 2. Depends covers every library the binary links (readelf NEEDED → the
#    package that ships it), and every declared dependency is installed
#    (dpkg-checkbuilddeps against the Depends line: an offline check);
# 3. the desktop entry (desktop-file-validate), the man page (man renders
#    it without warnings), each icon's size;
# 4. as root: dpkg -i (apt-get -f install if a dependency were missing),
#    /usr/bin/tollgate version, the window binary's version, `tollgate`
#    opening the window under Xvfb, doctor finds the libraries, install --user
#    next to the package writes just the autostart entry; then the package
#    (and anything apt pulled in) is purged, leaving the machine as found.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$(realpath "${1:?usage: package-test.sh BIN WINDOW_BIN OUTDIR}")
WINDOW_BIN=$(realpath "${2:?usage: package-test.sh BIN WINDOW_BIN OUTDIR}")
OUT=$(realpath "${3:-$ROOT/build/bin}")
# shellcheck source=../build/debian/version.sh
. "$ROOT/build/debian/version.sh"

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok   $*"; }

RAW=$("$BIN" version | awk '{print $2}')
VERSION=$(cd "$ROOT" && debian_version "$RAW")
ARCH=$(dpkg --print-architecture)
DEB="$OUT/tollgate_${VERSION}_${ARCH}.deb"
[ -f "$DEB" ] || fail "no $DEB (run make package)"
echo "package test: $DEB"

TMP=$(mktemp -d)
installed_by_us=""
before_pkgs="$TMP/before"
cleanup() {
  local rc=$?
  if [ -n "$installed_by_us" ]; then
    echo "removing the package again"
    dpkg_retry --purge tollgate >/dev/null || rc=1
    # Anything apt-get -f pulled in goes too.
    extra=$(comm -13 "$before_pkgs" <(installed_packages) | tr '\n' ' ')
    if [ -n "${extra// /}" ]; then
      echo "purging what apt-get pulled in: $extra"
      DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $extra >/dev/null || rc=1
    fi
  fi
  rm -rf "$TMP"
  exit $rc
}
trap cleanup EXIT

installed_packages() { dpkg-query -W -f='${db:Status-Abbrev} ${binary:Package}\n' | awk '$1 ~ /^ii/ {print $2}' | LC_ALL=C sort; }

# dpkg does not wait for its lock; another engineer's apt may hold it.
dpkg_retry() {
  local i out
  for i in $(seq 60); do
    if out=$(dpkg "$@" 2>&1); then printf '%s\n' "$out"; return 0; fi
    grep -qi 'lock' <<<"$out" || { printf '%s\n' "$out" >&2; return 1; }
    sleep 2
  done
  printf '%s\n' "$out" >&2
  return 1
}

# ---- 1. control fields --------------------------------------------------------
field() { dpkg-deb -f "$DEB" "$1"; }
for f in Package Version Architecture Maintainer Installed-Size Depends Section Priority Description; do
  [ -n "$(field "$f")" ] || fail "control field $f is empty"
done
[ "$(field Package)" = tollgate ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$VERSION" ] || fail "Version: $(field Version), want $VERSION (from the binary's $RAW)"
[ "$(field Architecture)" = "$ARCH" ] || fail "Architecture: $(field Architecture), want $ARCH"
[ "$(field Section)" = devel ] && [ "$(field Priority)" = optional ] || fail "Section/Priority: $(field Section)/$(field Priority)"
grep -Eq '^.+ <[^ >]+@[^ >]+>$' <<<"$(field Maintainer)" || fail "Maintainer: $(field Maintainer) is not 'Name <email>'"
DEPENDS=$(field Depends)
for need in libwebkit2gtk-4.1-0 libgtk-3-0 libc6; do
  grep -Eq "(^|, )$need( |,|$)" <<<"$DEPENDS" || fail "Depends lacks $need: $DEPENDS"
done
pass "control: tollgate $VERSION $ARCH; Depends: $DEPENDS"

# ---- file list, owners, modes -------------------------------------------------
want_files=$(
  cat <<'EOF'
./usr/bin/tollgate
./usr/lib/tollgate/tollgate-window
./usr/share/applications/tollgate.desktop
./usr/share/doc/tollgate/README.md.gz
./usr/share/icons/hicolor/128x128/apps/tollgate.png
./usr/share/icons/hicolor/16x16/apps/tollgate.png
./usr/share/icons/hicolor/22x22/apps/tollgate.png
./usr/share/icons/hicolor/24x24/apps/tollgate.png
./usr/share/icons/hicolor/256x256/apps/tollgate.png
./usr/share/icons/hicolor/32x32/apps/tollgate.png
./usr/share/icons/hicolor/48x48/apps/tollgate.png
./usr/share/icons/hicolor/512x512/apps/tollgate.png
./usr/share/icons/hicolor/64x64/apps/tollgate.png
./usr/share/icons/hicolor/scalable/apps/tollgate.svg
./usr/share/man/man1/tollgate.1.gz
EOF
)
got_files=$(dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ {print $6}' | LC_ALL=C sort)
[ "$got_files" = "$(LC_ALL=C sort <<<"$want_files")" ] || fail "file list differs:
$(diff <(LC_ALL=C sort <<<"$want_files") <(echo "$got_files"))"
dpkg-deb -c "$DEB" | awk '
  $2 != "root/root" { print "owner " $2 " of " $6; bad = 1 }
  $1 ~ /^d/ && $1 != "drwxr-xr-x" { print "mode " $1 " of " $6; bad = 1 }
  function exe(p) { return p == "./usr/bin/tollgate" || p == "./usr/lib/tollgate/tollgate-window" }
  $1 ~ /^-/ && exe($6) && $1 != "-rwxr-xr-x" { print "mode " $1 " of " $6; bad = 1 }
  $1 ~ /^-/ && !exe($6) && $1 != "-rw-r--r--" { print "mode " $1 " of " $6; bad = 1 }
  END { exit bad }' || fail "owners or modes"
pass "files: $(wc -l <<<"$got_files") files, root-owned, 0755 binaries, 0644 data"

dpkg-deb -x "$DEB" "$TMP/x"
dpkg-deb -e "$DEB" "$TMP/ctl"
(cd "$TMP/x" && md5sum --quiet -c "$TMP/ctl/md5sums") || fail "md5sums"
[ "$("$TMP/x/usr/bin/tollgate" version)" = "tollgate $RAW" ] || fail "packaged binary says $("$TMP/x/usr/bin/tollgate" version)"
[ "$("$TMP/x/usr/lib/tollgate/tollgate-window" version)" = "tollgate $RAW" ] || fail "packaged window binary says $("$TMP/x/usr/lib/tollgate/tollgate-window" version)"
# The command-line binary, which harnesses exec as a hook, loads no GTK.
if readelf -d "$TMP/x/usr/bin/tollgate" | grep -Eq 'NEEDED.*\[lib(gtk|gdk|webkit2gtk|javascriptcoregtk)'; then
  fail "/usr/bin/tollgate links GTK: $(readelf -d "$TMP/x/usr/bin/tollgate" | grep NEEDED)"
fi
pass "both binaries run; /usr/bin/tollgate needs only $(readelf -d "$TMP/x/usr/bin/tollgate" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')(no GTK)"

# ---- 2. Depends covers what the binary links; every dependency is installed ---
owner_of() { # the package shipping a library path (usrmerge: /lib or /usr/lib)
  local p=$1 alt out
  for alt in "$p" "$(realpath "$p")" "/usr${p#/usr}" "${p#/usr}"; do
    out=$(dpkg -S "$alt" 2>/dev/null) && [ -n "$out" ] && { sed -n '1s/:.*//p' <<<"$out"; return 0; }
  done
  return 1
}
for lib in $(readelf -d "$BIN" "$WINDOW_BIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u); do
  path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64|AArch64/ && !found {print $NF; found = 1}')
  [ -n "$path" ] || fail "$lib (NEEDED) is not in the ld.so cache"
  pkg=$(owner_of "$path") || fail "no package ships $path"
  grep -Eq "(^|, |\| )$pkg( |,|$)" <<<"$DEPENDS" || fail "$lib comes from $pkg, which Depends does not name: $DEPENDS"
done
pass "Depends names the package of every NEEDED library"
if dpkg-checkbuilddeps -d "$DEPENDS" /dev/null 2>"$TMP/unmet"; then
  pass "every declared dependency is installed (dpkg-checkbuilddeps)"
else
  echo "note: $(cat "$TMP/unmet") — the install below resolves them with apt-get -f install"
  for p in $(sed -n 's/.*Unmet build dependencies: //p' "$TMP/unmet" | tr -d ',' | tr ' ' '\n' | grep -v '^(' | grep -v ')$'); do
    apt-cache policy "$p" | grep -q 'Candidate: [0-9]' || fail "dependency $p is neither installed nor installable (apt-cache policy)"
  done
fi

# ---- 3. the entry, the man page, the icons ------------------------------------
if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate "$TMP/x/usr/share/applications/tollgate.desktop" || fail "desktop-file-validate"
  pass "desktop-file-validate"
else
  echo "skip desktop-file-validate (desktop-file-utils not installed; make deps-package installs it)"
fi
grep -qx 'Exec=tollgate' "$TMP/x/usr/share/applications/tollgate.desktop" || fail "Exec is not tollgate"
gzip -t "$TMP/x/usr/share/man/man1/tollgate.1.gz" || fail "man page is not gzip"
if command -v man >/dev/null; then
  warnings=$(MANWIDTH=80 man --warnings -l "$TMP/x/usr/share/man/man1/tollgate.1.gz" 2>&1 >"$TMP/man.txt") || fail "man: $warnings"
  [ -z "$warnings" ] || fail "man page warnings: $warnings"
  grep -q 'tollgate doctor' "$TMP/man.txt" && grep -q 'install --user' "$TMP/man.txt" || fail "man page lacks doctor or install"
  pass "man page renders without warnings"
fi
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8}'; }
for png in "$TMP"/x/usr/share/icons/hicolor/*/apps/tollgate.png; do
  dir=$(basename "$(dirname "$(dirname "$png")")")
  [ "$(png_size "$png")" = "$dir" ] || fail "$png is $(png_size "$png"), not $dir"
done
grep -q '<svg' "$TMP/x/usr/share/icons/hicolor/scalable/apps/tollgate.svg" || fail "scalable icon is not SVG"
pass "icons: each PNG is its folder's size, plus the SVG"

# ---- 4. install on this machine, run it, remove it ----------------------------
if [ "$(id -u)" != 0 ]; then
  echo "skip the install check: not root (CI runs as root)"
  exit 0
fi
exec 9>/tmp/tollgate-package-test.lock
flock -w 900 9 || fail "another package test holds /tmp/tollgate-package-test.lock"
if dpkg-query -W -f='${db:Status-Abbrev}' tollgate 2>/dev/null | grep -q '^i'; then
  echo "skip the install check: a tollgate package is already installed here; not touching it"
  exit 0
fi
if [ -e /usr/bin/tollgate ]; then
  echo "skip the install check: /usr/bin/tollgate exists and belongs to no package; not touching it"
  exit 0
fi
installed_packages >"$before_pkgs"
installed_by_us=1
if ! dpkg_retry -i "$DEB" >"$TMP/dpkg.log" 2>&1; then
  cat "$TMP/dpkg.log"
  echo "dpkg -i left dependencies to resolve: apt-get -f install"
  DEBIAN_FRONTEND=noninteractive apt-get -f install -y -qq -o DPkg::Lock::Timeout=300 || fail "apt-get -f install"
fi
[ "$(dpkg-query -W -f='${db:Status-Abbrev}' tollgate)" = "ii " ] || fail "tollgate is not installed: $(dpkg-query -W -f='${Status}' tollgate)"
[ "$(command -v tollgate)" = /usr/bin/tollgate ] || fail "tollgate on PATH is $(command -v tollgate)"
[ "$(/usr/bin/tollgate version)" = "tollgate $RAW" ] || fail "/usr/bin/tollgate version: $(/usr/bin/tollgate version)"
[ "$(dpkg -L tollgate | grep -c '/apps/tollgate\.')" = 10 ] || fail "dpkg -L lists $(dpkg -L tollgate | grep -c '/apps/tollgate\.') icons"
pass "installed: $(/usr/bin/tollgate version) from /usr/bin"
[ "$(/usr/lib/tollgate/tollgate-window version)" = "tollgate $RAW" ] || fail "/usr/lib/tollgate/tollgate-window version: $(/usr/lib/tollgate/tollgate-window version)"

# `tollgate` with no verb, as the menu entry runs it: it finds the window
# binary in /usr/lib/tollgate and execs it (same PID), and the window's
# tollgate comes up. Under Xvfb, when the test packages are installed.
if command -v Xvfb >/dev/null && command -v xdpyinfo >/dev/null; then
  for n in $(seq 141 190); do
    [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ] || { XNUM=$n; break; }
  done
  Xvfb ":$XNUM" -screen 0 1024x768x24 -nolisten tcp >"$TMP/xvfb.log" 2>&1 &
  XPID=$!
  for _ in $(seq 50); do DISPLAY=":$XNUM" xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
  mkdir -p "$TMP/winhome"
  DISPLAY=":$XNUM" HOME="$TMP/winhome" /usr/bin/tollgate --home "$TMP/wintg" --listen 127.0.0.1:0 >"$TMP/window.log" 2>&1 &
  WPID=$!
  for _ in $(seq 150); do [ -s "$TMP/wintg/api.json" ] && break; sleep 0.1; done
  wexe=$(readlink "/proc/$WPID/exe" || true)
  started=""; [ -s "$TMP/wintg/api.json" ] && started=1
  kill -TERM "$WPID" 2>/dev/null || true
  wait "$WPID" 2>/dev/null || true
  kill "$XPID" 2>/dev/null || true
  wait "$XPID" 2>/dev/null || true
  [ "$wexe" = /usr/lib/tollgate/tollgate-window ] || fail "tollgate (no verb) runs $wexe, not /usr/lib/tollgate/tollgate-window: $(cat "$TMP/window.log")"
  [ -n "$started" ] || fail "the window's tollgate wrote no api.json: $(cat "$TMP/window.log")"
  pass "tollgate (no verb) execs /usr/lib/tollgate/tollgate-window under Xvfb (same PID) and the window starts"
else
  echo "skip the window start: no Xvfb (make deps installs it)"
fi

# doctor from the package: the libraries it depends on resolve.
HOME_DIR="$TMP/home"
mkdir -p "$HOME_DIR"
HOME="$HOME_DIR" XDG_CONFIG_HOME="" XDG_DATA_HOME="" /usr/bin/tollgate doctor --home "$TMP/tg" --json >"$TMP/doctor.json" || true
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const by = Object.fromEntries(r.checks.map(c => [c.id, c]));
  for (const id of ["webkitgtk", "gtk"]) if (by[id].status !== "ok") { console.error(id, by[id]); process.exit(1); }
  if (by.api.status !== "error" || !by.api.fix) { console.error("api", by.api); process.exit(1); }
  if (by.window.status !== "ok" || by.window.facts.path !== "/usr/lib/tollgate/tollgate-window") { console.error("window", by.window); process.exit(1); }
' "$TMP/doctor.json" || fail "doctor from the package: $(cat "$TMP/doctor.json")"
pass "doctor: WebKitGTK and GTK resolve, the window binary is found; a stopped tollgate is reported with its fix"

# install --user next to the package: only the autostart entry, starting /usr/bin/tollgate.
HOME="$HOME_DIR" XDG_CONFIG_HOME="" XDG_DATA_HOME="" XDG_DATA_DIRS="" /usr/bin/tollgate install --user --autostart >"$TMP/install.log"
auto="$HOME_DIR/.config/autostart/tollgate.desktop"
grep -qx 'Exec=/usr/bin/tollgate --hidden' "$auto" || fail "autostart entry: $(cat "$auto" 2>&1)"
[ ! -e "$HOME_DIR/.local/bin/tollgate" ] || fail "install --user copied the packaged binary"
HOME="$HOME_DIR" XDG_CONFIG_HOME="" XDG_DATA_HOME="" /usr/bin/tollgate install --user --uninstall >/dev/null
[ -z "$(find "$HOME_DIR" -mindepth 1)" ] || fail "install --user --uninstall left: $(find "$HOME_DIR" -mindepth 1)"
pass "install --user --autostart next to the package: just the autostart entry, removed again"

# Remove it; the machine is as it was.
dpkg_retry --purge tollgate >/dev/null
[ ! -e /usr/bin/tollgate ] || fail "/usr/bin/tollgate is still there after purge"
extra=$(comm -13 "$before_pkgs" <(installed_packages) | tr '\n' ' ')
if [ -n "${extra// /}" ]; then
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $extra >/dev/null
fi
installed_by_us=""
cmp -s "$before_pkgs" <(installed_packages) || fail "the installed packages differ from before: $(diff "$before_pkgs" <(installed_packages))"
pass "purged: no /usr/bin/tollgate, the same packages installed as before"
echo "package test passed"
