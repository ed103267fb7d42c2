#!/usr/bin/env bash
# Builds the Debian package of Ferry with dpkg-deb: `make deb` runs it after the release build,
# with the Makefile's install variables set for /usr (see scripts/install.sh).
#
# The files are what `make install` installs (man pages compressed and executables stripped, as
# Debian ships them). Depends is derived, not written by hand: the shared libraries the installed
# executables name (their ELF NEEDED entries), resolved by ldd, and the package dpkg says each
# comes from, at least at the upstream version installed here (the one the binaries were built
# and tested against).
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "deb.sh: $*" >&2; exit 1; }

command -v dpkg-deb >/dev/null || fail "dpkg-deb is missing (Debian's dpkg package)"
version=$("$BIN/ferryd" --version) || fail "$BIN/ferryd --version failed"
version=${version#ferryd }
arch=$(dpkg --print-architecture)
stage="$DEBDIR/root"
rm -rf "$stage"
mkdir -p "$stage"
DESTDIR="$(cd "$stage" && pwd)" bash scripts/install.sh install >/dev/null
find "$stage$MANDIR" -name '*.[1-9]' -exec gzip -9n {} +
# Executables without their debugging symbols, as Debian ships them (dh_strip's options).
for program in $PROGRAMS; do
  strip --remove-section=.comment --remove-section=.note --strip-unneeded "$stage$BINDIR/$program"
done

# The package that ships the library at PATH (dpkg knows some under /lib, some under /usr/lib).
# No reader in these pipelines stops early: under pipefail the writer's SIGPIPE would fail them.
package_of() {
  local path=$1 owner candidate
  for candidate in "$path" "$(readlink -f "$path")" "${path#/usr}" "/usr$path"; do
    owner=$(dpkg -S "$candidate" 2>/dev/null | awk 'NR == 1') && [ -n "$owner" ] && { echo "${owner%%:*}"; return; }
  done
  fail "no Debian package ships $path"
}

# `PACKAGE (>= UPSTREAM)` for the installed version of PACKAGE.
versioned() {
  local installed
  installed=$(dpkg-query -W -f='${Version}' "$1") || fail "$1 is not installed"
  installed=${installed%-*}
  echo "$1 (>= $installed)"
}

# The libraries the executables name, each resolved to the file ldd loads.
libraries=()
for program in $PROGRAMS; do
  binary="$stage$BINDIR/$program"
  # A static executable (the ferry front) needs no library. (Read objdump's whole output: a
  # `grep -q` that stops early kills it with SIGPIPE, and pipefail would then skip the binary.)
  needed_libraries=$(objdump -p "$binary" | awk '$1 == "NEEDED" { print $2 }')
  [ -n "$needed_libraries" ] || continue
  resolved=$(ldd "$binary")
  if grep -q "not found" <<<"$resolved"; then fail "$program needs a library this machine lacks: $resolved"; fi
  if grep -Eq 'libswift|libFoundation|libdispatch|libBlocksRuntime|/opt/swift' <<<"$resolved"; then
    fail "$program is not self-contained (built without the static Swift runtime?): $resolved"
  fi
  for needed in $needed_libraries; do
    # `libc.so.6 => /lib/…/libc.so.6 (…)`, or for the dynamic loader `/lib64/ld-linux-….so.2 (…)`.
    path=$(awk -v lib="$needed" '$1 == lib && $2 == "=>" { print $3; exit }
                                 substr($1, length($1) - length(lib)) == "/" lib { print $1; exit }' <<<"$resolved")
    [ -n "$path" ] || fail "ldd does not resolve $needed for $program"
    libraries+=("$path")
  done
done
[ ${#libraries[@]} -gt 0 ] || fail "no shared library needed by any of: $PROGRAMS"
depends_line=$(printf '%s\n' "${libraries[@]}" | sort -u | while read -r path; do package_of "$path"; done \
  | sort -u | while read -r p; do versioned "$p"; done | paste -sd, | sed 's/,/, /g')

# GIO is loaded with dlopen when installed (FerryModel's type database): recommended, not needed.
recommends="default-dbus-session-bus | dbus-session-bus, shared-mime-info"
gio=$(ldconfig -p | awk '$1 == "libgio-2.0.so.0" && !found { print $NF; found = 1 }')
if [ -n "$gio" ]; then recommends="$recommends, $(package_of "$gio")"; fi

mkdir -p "$stage/DEBIAN"
cat >"$stage/DEBIAN/control" <<EOF
Package: ferry
Version: $version
Architecture: $arch
Maintainer: The Ferry project <ferry@localhost>
Section: utils
Priority: optional
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: $depends_line
Recommends: $recommends
Description: move items between apps over D-Bus
 Ferry brings the iPad and Mac model of moving things between apps (item
 providers with typed representations, pasteboards, drag sessions, sharing
 and scenes) to Linux desktops. This package holds the broker ferryd,
 started by D-Bus activation on the session bus, and the ferry command.
EOF
deb="$DEBDIR/ferry_${version}_${arch}.deb"
# gzip: a few seconds where dpkg-deb's default xz takes minutes on a busy machine.
dpkg-deb --root-owner-group -Zgzip --build "$stage" "$deb" >/dev/null
echo "$deb"
