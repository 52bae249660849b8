# Sourced by package.sh and test/package-test.sh.
#
# debian_version RAW turns the version baked into the binary (`git describe
# --tags --always --dirty`, see the Makefile) into a Debian version:
#   v1.2.3                  → 1.2.3
#   v1.2.3-rc1              → 1.2.3~rc1                  (sorts before 1.2.3)
#   v1.2.3-4-gabc1234-dirty → 1.2.3+git4.gabc1234+dirty   (sorts after 1.2.3)
#   abc1234[-dirty]         → 0~git<commits>.gabc1234[+dirty] (no tag yet;
#                             the commit count keeps builds in order)
#   dev                     → 0~dev
debian_version() {
  local raw=$1 v
  v=${raw#v}
  if [[ $v =~ ^([0-9a-f]{7,40})(-dirty)?$ ]]; then
    local hash=${BASH_REMATCH[1]} dirty=${BASH_REMATCH[2]:+"+dirty"} count
    count=$(git rev-list --count "$hash" 2>/dev/null || echo 0)
    v="0~git${count}.g${hash}${dirty}"
  elif [[ $v =~ ^[0-9] ]]; then
    v=$(sed -E 's/-(rc|alpha|beta|pre)/~\1/; s/-([0-9]+)-g([0-9a-f]+)/+git\1.g\2/; s/-dirty$/+dirty/; s/-/./g' <<<"$v")
  else
    v="0~${v//-/.}"
  fi
  if ! [[ $v =~ ^[0-9][A-Za-z0-9.+~]*$ ]]; then
    echo "cannot make a Debian version of '$raw' (got '$v')" >&2
    return 1
  fi
  printf '%s\n' "$v"
}
