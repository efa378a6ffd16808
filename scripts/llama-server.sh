#!/usr/bin/env bash
# Prints the path of a llama-server binary built from the llama.cpp source that the npm package
# node-llama-cpp ships (llama/gitRelease.bundle), building it first when the cache lacks it.
# Nothing of node-llama-cpp runs: npm only fetches the tarball.
#
# Cache: ${PION_LLAMA_CACHE:-$HOME/.cache/pion/llama.cpp}/<node-llama-cpp version>/bin/llama-server
# (outside the repository, shared by every worktree of the machine). Concurrent runs wait on a
# lock; the build happens in a temp folder beside the cache and is renamed into place, binary last,
# so a binary that is there is a finished build. CPU only; the one download is the npm tarball
# (no curl, no OpenSSL, no prebuilt web UI). Build log: <cache>/<version>/build.log.
# Progress goes to stderr; stdout is the path only.
set -euo pipefail

NLC_VERSION=3.21.1
cache_root=${PION_LLAMA_CACHE:-$HOME/.cache/pion/llama.cpp}
dest="$cache_root/$NLC_VERSION"
bin="$dest/bin/llama-server"

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

for tool in npm git cmake tar c++; do
  command -v "$tool" >/dev/null 2>&1 || { echo "llama-server.sh: $tool is required to build llama-server" >&2; exit 1; }
done

mkdir -p "$dest"
# One build at a time per cache: a second run waits for the first and then finds its binary.
# Without flock both build, and the renames below still leave one whole binary.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$dest/.lock"
  flock 9
  if [ -x "$bin" ]; then
    echo "$bin"
    exit 0
  fi
fi
work=$(mktemp -d "$dest/.build-XXXXXX")
trap 'rm -rf "$work"' EXIT
log="$work/build.log"
started=$(date +%s)

echo "llama-server.sh: building llama-server from node-llama-cpp@$NLC_VERSION in $work (log: $log)" >&2
{
  (cd "$work" && npm pack --silent "node-llama-cpp@$NLC_VERSION")
  tar -xzf "$work/node-llama-cpp-$NLC_VERSION.tgz" -C "$work" package/llama/gitRelease.bundle package/llama/llama.cpp.info.json
  git clone --quiet "$work/package/llama/gitRelease.bundle" "$work/src"
  # GGML_NATIVE=OFF: the binary may run on another machine sharing the cache (a CI image). It is
  # no slower for the tests' tiny model: measured on a 2-core x86-64 box, 460 s to build and ~40k
  # prompt tokens/s, against 561 s (at low priority beside other jobs) and ~2k tokens/s with
  # GGML_NATIVE=ON.
  cmake -S "$work/src" -B "$work/build" -G "Unix Makefiles" \
    -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF \
    -DGGML_NATIVE=OFF \
    -DLLAMA_CURL=OFF \
    -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_SERVER=ON \
    -DLLAMA_BUILD_UI=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF
  cmake --build "$work/build" --config Release --target llama-server -j "${PION_LLAMA_JOBS:-2}"
} >"$log" 2>&1 || {
  tail -30 "$log" >&2
  echo "llama-server.sh: build failed (log above)" >&2
  exit 1
}

mkdir -p "$work/out/bin"
cp "$work/build/bin/llama-server" "$work/out/bin/llama-server"
cp "$work/package/llama/llama.cpp.info.json" "$work/out/llama.cpp.info.json"
# The vocabulary the test GGUF borrows (test/support/gguf.ts).
cp "$work/src/models/ggml-vocab-qwen2.gguf" "$work/out/ggml-vocab-qwen2.gguf"
echo "built in $(($(date +%s) - started)) s" >>"$log"
cp "$log" "$work/out/build.log"

# Move the finished files into place one by one with rename (atomic on one filesystem). A
# concurrent run that finished first already put identical files there; overwriting is harmless.
for f in llama.cpp.info.json ggml-vocab-qwen2.gguf build.log; do mv -f "$work/out/$f" "$dest/$f"; done
mkdir -p "$dest/bin"
mv -f "$work/out/bin/llama-server" "$bin"
echo "llama-server.sh: built in $(($(date +%s) - started)) s" >&2
echo "$bin"
