#!/bin/sh
# Installs pion from a release folder (the files `bun run build --release` writes to dist/release/,
# as a web server or a GitHub release serves them): picks the binary for this machine, checks it
# against SHA256SUMS, and installs it as <folder>/pion (pion.exe on Windows).
#
#   PION_RELEASE_URL=https://github.com/<owner>/pion/releases/download/v0.1.0 sh install.sh [folder]
#
# folder defaults to ~/.local/bin. Exits non-zero, installing nothing, when this machine has no
# release binary, a download fails, or the checksum does not match.
set -eu

say() { printf 'pion install: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

base=${PION_RELEASE_URL:-}
[ -n "$base" ] || die "set PION_RELEASE_URL to the release's download folder (the one holding SHA256SUMS)"
base=${base%/}
dest=${1:-"$HOME/.local/bin"}

case $(uname -s) in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  MINGW* | MSYS* | CYGWIN*) os=windows ;;
  *) die "no release binary for $(uname -s)" ;;
esac
case $(uname -m) in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) die "no release binary for $(uname -m)" ;;
esac
# A shell under Rosetta reports x86_64 on an arm64 Mac: the native binary is the one to run.
if [ "$os" = darwin ] && [ "$arch" = x64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
  arch=arm64
fi
target=$os-$arch
# glibc's ldd names glibc, musl's names musl (and exits 1, hence the || true).
if [ "$os" = linux ] && (ldd --version 2>&1 || true) | grep -qi musl; then
  target=$target-musl
fi
exe=""
[ "$os" = windows ] && exe=.exe

if command -v curl >/dev/null 2>&1; then
  fetch() { curl -fsSL "$1" -o "$2"; }
elif command -v wget >/dev/null 2>&1; then
  fetch() { wget -q "$1" -O "$2"; }
else
  die "needs curl or wget"
fi
if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
  die "needs sha256sum or shasum"
fi

mkdir -p "$dest"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pion-install-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

fetch "$base/SHA256SUMS" "$tmp/SHA256SUMS" || die "could not download $base/SHA256SUMS"
# One line per file, "<sha256>  pion-<version>-<target>[.exe]".
line=$(grep -E "^[0-9a-f]{64}  pion-[^ ]+-$target$exe\$" "$tmp/SHA256SUMS" || true)
[ -n "$line" ] || die "the release at $base has no binary for $target"
[ "$(printf '%s\n' "$line" | wc -l)" -eq 1 ] || die "SHA256SUMS lists more than one binary for $target"
want=${line%% *}
file=${line##* }

say "downloading $file"
fetch "$base/$file" "$tmp/$file" || die "could not download $base/$file"
got=$(sha256 "$tmp/$file")
[ "$got" = "$want" ] || die "checksum mismatch for $file: expected $want, got $got (nothing installed)"

chmod 755 "$tmp/$file"
# Moved in whole: a pion already running from $dest keeps its old file.
mv -f "$tmp/$file" "$dest/.pion$exe.new"
mv -f "$dest/.pion$exe.new" "$dest/pion$exe"
say "installed $dest/pion$exe ($target)"
case ":$PATH:" in
  *":$dest:"*) ;;
  *) say "$dest is not on PATH" ;;
esac
