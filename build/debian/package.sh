#!/usr/bin/env bash
# Builds the Debian package from build/ with dpkg-deb (no network):
#
#   build/debian/package.sh BIN WINDOW_BIN [OUTDIR]     (make package)
#
# BIN is the command-line build and WINDOW_BIN the window build (make build:
# no tags, and -tags desktop,production,webkit2_41); the package is
# OUTDIR/tollgate_<version>_<arch>.deb, OUTDIR defaulting to build/bin.
#
#   /usr/bin/tollgate                                   BIN (no GTK linked)
#   /usr/lib/tollgate/tollgate-window                   WINDOW_BIN, which `tollgate` with no verb execs
#   /usr/share/applications/tollgate.desktop            build/desktop/tollgate.desktop
#   /usr/share/icons/hicolor/<size>/apps/tollgate.png   build/desktop/icons (16…512, and scalable SVG)
#   /usr/share/man/man1/tollgate.1.gz                   build/debian/tollgate.1.in + `tollgate help`
#   /usr/share/doc/tollgate/README.md.gz                README.md
#
# Version: the binary's own (git describe, baked in by the Makefile), made a
# Debian version by version.sh. Depends: computed by dpkg-shlibdeps from the
# libraries the binary links, never written by hand. The icon and menu
# caches are refreshed by the hicolor-icon-theme and desktop-file-utils
# dpkg triggers, so the package has no maintainer scripts.
set -euo pipefail
umask 022
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=$(realpath "${1:?usage: package.sh BIN WINDOW_BIN [OUTDIR]}")
WINDOW_BIN=$(realpath "${2:?usage: package.sh BIN WINDOW_BIN [OUTDIR]}")
OUT=$(realpath -m "${3:-$ROOT/build/bin}")
MAINTAINER=${DEB_MAINTAINER:-tollgate maintainers <maintainers@users.noreply.a-seed-3ce15c18.example>}
cd "$ROOT"
# shellcheck source=version.sh
. build/debian/version.sh

for tool in dpkg-deb dpkg-shlibdeps gzip; do
  command -v "$tool" >/dev/null || { echo "package.sh: $tool is missing (make deps-package installs it)" >&2; exit 1; }
done

RAW=$("$BIN" version | awk '{print $2}')
[ "$("$WINDOW_BIN" version)" = "tollgate $RAW" ] || {
  echo "package.sh: $WINDOW_BIN says $("$WINDOW_BIN" version), $BIN says tollgate $RAW: build both with \`make build\`" >&2
  exit 1
}
VERSION=$(debian_version "$RAW")
ARCH=$(dpkg --print-architecture)
# Reproducible: every timestamp is the last commit's.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
DATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)

WORK="$OUT/deb"
PKG="$WORK/debian/tollgate" # dpkg-shlibdeps expects debian/<package>/
rm -rf "$WORK"
mkdir -p "$PKG" "$OUT"

install -D -m 0755 "$BIN" "$PKG/usr/bin/tollgate"
install -D -m 0755 "$WINDOW_BIN" "$PKG/usr/lib/tollgate/tollgate-window"
install -D -m 0644 build/desktop/tollgate.desktop "$PKG/usr/share/applications/tollgate.desktop"
(cd build/desktop/icons && find hicolor -type f | sort) | while read -r icon; do
  install -D -m 0644 "build/desktop/icons/$icon" "$PKG/usr/share/icons/$icon"
done

# The man page: the hand-written sections plus `tollgate help` verbatim
# (escaped for roff: backslashes, hyphens, leading dots and quotes).
USAGE=$("$BIN" help | sed -n '/^usage:/,$p' | sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/")
install -d -m 0755 "$PKG/usr/share/man/man1"
awk -v usage="$USAGE" -v version="$RAW" -v date="$DATE" '
  { gsub(/@VERSION@/, version); gsub(/@DATE@/, date) }
  /^@USAGE@$/ { print usage; next }
  { print }' build/debian/tollgate.1.in | gzip -9n >"$PKG/usr/share/man/man1/tollgate.1.gz"

install -d -m 0755 "$PKG/usr/share/doc/tollgate"
gzip -9n <README.md >"$PKG/usr/share/doc/tollgate/README.md.gz"
chmod 0644 "$PKG/usr/share/man/man1/tollgate.1.gz" "$PKG/usr/share/doc/tollgate/README.md.gz"

# Depends from the ELF's NEEDED libraries, through the shlibs files of the
# installed library packages.
mkdir -p "$WORK/debian"
printf 'Source: tollgate\n\nPackage: tollgate\nArchitecture: any\n' >"$WORK/debian/control"
DEPENDS=$(cd "$WORK" && dpkg-shlibdeps -O -edebian/tollgate/usr/bin/tollgate -edebian/tollgate/usr/lib/tollgate/tollgate-window 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
for need in libwebkit2gtk-4.1-0 libgtk-3-0; do
  grep -Eq "(^|, )$need( |,|$)" <<<"$DEPENDS" || {
    echo "package.sh: $WINDOW_BIN does not link $need (Depends: $DEPENDS): build it with \`make build\` (tags desktop,production,webkit2_41)" >&2
    exit 1
  }
done
# The point of two binaries: the one hooks exec loads no GTK.
if readelf -d "$BIN" | grep -Eq 'NEEDED.*\[lib(gtk|webkit2gtk)'; then
  echo "package.sh: $BIN links GTK or WebKitGTK: build it without tags (make build)" >&2
  exit 1
fi

SIZE=$(du -sk --apparent-size "$PKG" | cut -f1)
install -d -m 0755 "$PKG/DEBIAN"
sed -e "s|@VERSION@|$VERSION|" -e "s|@ARCH@|$ARCH|" -e "s|@MAINTAINER@|$MAINTAINER|" \
  -e "s|@INSTALLED_SIZE@|$SIZE|" -e "s|@DEPENDS@|$DEPENDS|" build/debian/control.in >"$PKG/DEBIAN/control"
(cd "$PKG" && find usr -type f | LC_ALL=C sort | xargs md5sum) >"$PKG/DEBIAN/md5sums"
chmod 0644 "$PKG/DEBIAN/control" "$PKG/DEBIAN/md5sums"
find "$PKG" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

DEB="$OUT/tollgate_${VERSION}_${ARCH}.deb"
rm -f "$OUT"/tollgate_*.deb
dpkg-deb --root-owner-group -Zxz --build "$PKG" "$DEB" >/dev/null
rm -rf "$WORK"
echo "$DEB"
echo "  Version: $VERSION"
echo "  Depends: $DEPENDS"
