#!/usr/bin/env bash
# podref set-up on Debian bookworm (run as root, or with sudo available).
#
#   tools/setup.sh deps      install the Debian packages podref needs
#   tools/setup.sh build     deps + configure + build (release preset)
#   tools/setup.sh run       build + run the main job
#   tools/setup.sh test      build + run every test
#   tools/setup.sh sanitize  deps + clang-14, build the asan-ubsan preset
#                            (tests and fuzz targets), run its tests
#   tools/setup.sh sanitize-build  the same without running the tests
#
# Idempotent and quiet on a second run: packages already installed are not
# touched, an existing build tree is reused, and the build is incremental.
set -euo pipefail

cd "$(dirname "$0")/.."

# The whole dependency list: compilers and build tools, then libraries.
packages=(
  g++ cmake ninja-build pkg-config lld
  libcaf-dev libfmt-dev catch2 nlohmann-json3-dev libyaml-dev
  libcli11-dev libbenchmark-dev gnuplot-nox libtcmalloc-minimal4 libboost-dev
  libssl-dev libnghttp2-dev libcurl4-openssl-dev libsimdjson-dev prometheus-cpp-dev
  nghttp2-client curl
)
# A kubectl for the tests that drive `podref apiserver` with a real client:
# Debian's (1.20) unless one is installed already (its package would
# conflict with, say, the Google Cloud SDK's).
command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)
# Debian's kubectl (1.20, what a fresh machine gets) unpacked beside the
# builds when another kubectl is installed, so that the kubectl cases run
# with both (tests/CMakeLists.txt: PODREF_DEBIAN_KUBECTL).
debian_kubectl_dir=build/debian-kubectl
# The sanitizer build (the asan-ubsan preset) is clang's: it compiles ASan +
# UBSan code in half gcc's time (17 s against 38 s for wire/http_connection.cpp)
# and the same tree builds the libFuzzer targets.
sanitizer_packages=(clang-14 libclang-rt-14-dev)

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

install_deps() {
  local missing=()
  for p in "${packages[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" \
      || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "podref: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

fetch_debian_kubectl() {
  [ -x "$debian_kubectl_dir/usr/bin/kubectl" ] && return 0
  dpkg-query -W -f='${Status}' kubernetes-client 2>/dev/null \
    | grep -q "ok installed" && return 0
  local tmp
  tmp=$(mktemp -d)
  chmod 755 "$tmp"
  if (cd "$tmp" && { apt-get download -qq kubernetes-client \
        || { as_root apt-get update -qq && apt-get download -qq kubernetes-client; }; }) \
      >/dev/null 2>&1; then
    mkdir -p "$debian_kubectl_dir"
    dpkg-deb -x "$tmp"/kubernetes-client_*.deb "$debian_kubectl_dir"
  else
    echo "podref: Debian's kubernetes-client could not be fetched: its kubectl cases skip"
  fi
  rm -rf "$tmp"
}

build() {
  local preset=${1:-release}
  if [ ! -f "build/$preset/build.ninja" ]; then
    cmake --preset "$preset" >/dev/null
  fi
  cmake --build --preset "$preset" \
    | { grep -vE '^(ninja: no work to do|\[0/[0-9]+\] Re-checking globbed)' || true; }
}

# The main job: a node simulation on the embedded in-memory API server.
main_job() {
  build/release/tools/podref simulate
}

case "${1:-}" in
  deps) install_deps ;;
  build) install_deps; build release ;;
  run) install_deps; build release; main_job ;;
  test) install_deps; fetch_debian_kubectl; build release; ctest --preset release ;;
  sanitize-build) install_deps "${sanitizer_packages[@]}"; build asan-ubsan ;;
  sanitize)
    install_deps "${sanitizer_packages[@]}"; fetch_debian_kubectl; build asan-ubsan
    ctest --preset asan-ubsan ;;
  *) sed -n '2,13p' "$0" >&2; exit 2 ;;
esac
