#!/usr/bin/env bash
# Installs Ferry from a release build, and removes exactly what it installed. Run by the Makefile
# (`make install`, `make uninstall`, `make deb`), which sets the environment below.
#
# Usage: scripts/install.sh generate    man pages and completions into $GENERATED (after the
#                                       release build and `swift package generate-manual`)
#        scripts/install.sh install     everything into $DESTDIR$PREFIX…, recorded in the manifest
#        scripts/install.sh uninstall   removes what the manifest lists
#
# Environment (the Makefile's variables): PROGRAMS (the executables, one word each), BIN (the
# release build's bin directory), GENERATED, MANUALS (the manual plugin's output directory),
# DESTDIR, PREFIX, BINDIR, DATADIR, MANDIR, DBUSSERVICEDIR, USERUNITDIR, AUTOSTARTDIR, and
# MANIFEST (the manifest's installed path; empty: none, as in the Debian package, where dpkg
# keeps the list).
#
# The manifest lists, one a line, `d DIR` for every directory the install created and `f FILE`
# for every file it installed (paths without DESTDIR). A second install adds to it, so uninstall
# removes the files of both and the directories the first one created, once they are empty.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "install.sh: $*" >&2; exit 1; }

# The installed service and desktop files name Ferry's programs as installed under /usr/local
# (the repository's copies work as they are after a default install): the real BINDIR and
# DATADIR replace those prefixes.
substitute_paths() {
  sed -e "s|/usr/local/bin/|$BINDIR/|g" -e "s|/usr/local/share/|$DATADIR/|g" "$1"
}

# The programs whose help ArgumentParser writes: they have pages in the plugin's output. The
# full CLI `ferry-cli` is `ferry`'s other half and never typed: its pages and completions are
# `ferry`'s (its command name), so it gets none of its own.
described_programs() {
  local program
  for program in $PROGRAMS; do
    [ "$program" = ferry-cli ] && continue
    if compgen -G "$MANUALS/*/$program.1" >/dev/null; then echo "$program"; fi
  done
}

generate() {
  [ -d "$MANUALS" ] || fail "no manual pages in $MANUALS: run 'swift package generate-manual' first (make release does)"
  rm -rf "$GENERATED"
  mkdir -p "$GENERATED/man1" "$GENERATED/bash" "$GENERATED/zsh" "$GENERATED/fish"
  local program page found
  for program in $(described_programs); do
    # Pages are named after the command path: ferry.1, ferry.history.list.1.
    found=0
    for page in "$MANUALS"/*/"$program".1 "$MANUALS"/*/"$program".*.1; do
      [ -f "$page" ] || continue
      cp "$page" "$GENERATED/man1/"
      found=1
    done
    [ "$found" = 1 ] || fail "no manual pages for $program in $MANUALS"
    # `ferry` hands --generate-completion-script to ferry-cli, which answers for `ferry`.
    "$BIN/$program" --generate-completion-script bash >"$GENERATED/bash/$program"
    "$BIN/$program" --generate-completion-script zsh >"$GENERATED/zsh/_$program"
    "$BIN/$program" --generate-completion-script fish >"$GENERATED/fish/$program.fish"
  done
  [ -f "$GENERATED/man1/ferry.1" ] || fail "no ferry.1 among the generated pages"
}

# --- install ---------------------------------------------------------------------------------

manifest_lines=()

# Records a manifest line: in memory until the manifest's directory exists, then in the file.
record() {
  [ -n "$MANIFEST" ] || return 0
  if [ -d "$DESTDIR$(dirname "$MANIFEST")" ]; then
    if [ ${#manifest_lines[@]} -gt 0 ]; then printf '%s\n' "${manifest_lines[@]}" >>"$DESTDIR$MANIFEST"; manifest_lines=(); fi
    grep -qxF "$1" "$DESTDIR$MANIFEST" 2>/dev/null || echo "$1" >>"$DESTDIR$MANIFEST"
  else
    manifest_lines+=("$1")
  fi
}

# Creates DIR (and its missing parents) under DESTDIR, recording each directory it creates.
make_dir() {
  local dir=$1 missing=() parent
  parent=$dir
  while [ ! -d "$DESTDIR$parent" ]; do
    missing=("$parent" "${missing[@]}")
    parent=$(dirname "$parent")
  done
  for dir in "${missing[@]}"; do
    mkdir "$DESTDIR$dir"
    record "d $dir"
  done
}

# Installs SOURCE as FILE (a full installed path) with MODE; SOURCE `-` reads standard input.
put() {
  local mode=$1 source=$2 file=$3
  make_dir "$(dirname "$file")"
  if [ "$source" = - ]; then
    install -m "$mode" /dev/stdin "$DESTDIR$file"
  else
    install -m "$mode" "$source" "$DESTDIR$file"
  fi
  record "f $file"
}

install_all() {
  local program file
  for program in $PROGRAMS; do
    [ -x "$BIN/$program" ] || fail "no $BIN/$program: build it first (make release)"
  done
  [ -d "$GENERATED/man1" ] || fail "no man pages in $GENERATED: run scripts/install.sh generate first (make release does)"
  if [ -n "$DESTDIR" ]; then mkdir -p "$DESTDIR"; fi
  if [ -n "$MANIFEST" ]; then make_dir "$(dirname "$MANIFEST")"; record "f $MANIFEST"; fi

  for program in $PROGRAMS; do
    put 755 "$BIN/$program" "$BINDIR/$program"
  done
  for file in services/*.service; do
    # D-Bus activation files have a [D-BUS Service] group; the others are systemd user units.
    if grep -q '^\[D-BUS Service\]' "$file"; then
      substitute_paths "$file" | put 644 - "$DBUSSERVICEDIR/$(basename "$file")"
    else
      substitute_paths "$file" | put 644 - "$USERUNITDIR/$(basename "$file")"
    fi
  done
  for file in services/*.desktop; do
    [ -f "$file" ] || continue
    substitute_paths "$file" | put 644 - "$AUTOSTARTDIR/$(basename "$file")"
  done
  for file in services/interfaces/*.xml; do
    put 644 "$file" "$DATADIR/dbus-1/interfaces/$(basename "$file")"
  done
  for file in "$GENERATED"/man1/*.1; do
    put 644 "$file" "$MANDIR/man1/$(basename "$file")"
  done
  for file in "$GENERATED"/bash/*; do
    [ -f "$file" ] || continue
    put 644 "$file" "$DATADIR/bash-completion/completions/$(basename "$file")"
  done
  for file in "$GENERATED"/zsh/*; do
    [ -f "$file" ] || continue
    put 644 "$file" "$DATADIR/zsh/site-functions/$(basename "$file")"
  done
  for file in "$GENERATED"/fish/*; do
    [ -f "$file" ] || continue
    put 644 "$file" "$DATADIR/fish/vendor_completions.d/$(basename "$file")"
  done
  put 644 README.md "$DATADIR/doc/ferry/README.md"
  for file in docs/*.md; do
    put 644 "$file" "$DATADIR/doc/ferry/docs/$(basename "$file")"
  done
  [ ${#manifest_lines[@]} -eq 0 ] || fail "the manifest's directory $(dirname "$MANIFEST") was not created"
  echo "installed Ferry into ${DESTDIR}${PREFIX}${MANIFEST:+ (list: $DESTDIR$MANIFEST)}"
}

uninstall_all() {
  [ -n "$MANIFEST" ] || fail "no manifest to uninstall from (MANIFEST is empty)"
  [ -f "$DESTDIR$MANIFEST" ] || fail "nothing to uninstall: no $DESTDIR$MANIFEST (was Ferry installed with this PREFIX and DESTDIR?)"
  local kind path directories=()
  while read -r kind path; do
    case "$kind" in
      f) [ "$path" = "$MANIFEST" ] || rm -f "$DESTDIR$path" ;;
      d) directories=("$path" "${directories[@]}") ;;
      *) fail "unreadable line in $DESTDIR$MANIFEST: $kind $path" ;;
    esac
  done <"$DESTDIR$MANIFEST"
  rm -f "$DESTDIR$MANIFEST"
  # Directories the install created, deepest first, once nothing else is in them.
  for path in "${directories[@]}"; do
    [ -d "$DESTDIR$path" ] || continue
    rmdir "$DESTDIR$path" 2>/dev/null || echo "kept $DESTDIR$path: it holds files Ferry did not install" >&2
  done
  echo "removed Ferry from ${DESTDIR}${PREFIX}"
}

case "${1:-}" in
  generate) generate ;;
  install) install_all ;;
  uninstall) uninstall_all ;;
  *) fail "usage: scripts/install.sh generate|install|uninstall" ;;
esac
