#!/usr/bin/env bash
# Installs the Debian packages pipetwin builds against, then the pinned speedscope of the
# trace import test (tests/report/speedscope/), skipping what is present.
# Idempotent: a second run does nothing. When it cannot install (not root, no apt, no
# registry), it prints the exact command to run.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  libsimgrid-dev                    # simulator
  libtorch-dev libgloo-dev          # real backend (CPU LibTorch + Gloo)
  libprotobuf-dev protobuf-compiler # scenario schema, timelines
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev
  libyaml-cpp-dev zlib1g-dev        # measured jobs' traces: parallel sizes (YAML), gzip
  libtomlplusplus-dev               # torchtitan's job files (TOML)
  pybind11-dev python3-dev          # the Python module (python/)
  python3-venv python3-pandas       #   pip install ./python into a venv; DataFrames (optional)
  clang-14 libfuzzer-14-dev         # fuzzing (make fuzz); the sanitizer runtimes come
  libclang-rt-14-dev                #   with clang's compiler-rt, only recommended by clang-14
  chromium                          # the HTML reports' browser tests (headless)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
# npm installs speedscope below. Debian's nodejs comes without it while NodeSource's carries
# its own (and conflicts with Debian's npm), so the package is asked for only when the
# command is missing.
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi

# speedscope, pinned by tests/report/speedscope/package-lock.json, into its git-ignored
# node_modules; present when the installed version is the pinned one.
install_speedscope() {
  local dir version
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/report/speedscope"
  version=$(sed -n 's/^ *"speedscope": "\(.*\)"$/\1/p' "$dir/package.json")
  if grep -qs "\"version\": \"$version\"" "$dir/node_modules/speedscope/package.json"; then
    echo "deps: speedscope $version present"
    return 0
  fi
  echo "deps: installing speedscope $version"
  # Only the trace import test needs it (and fails, saying so, without it): a machine that
  # cannot reach the npm registry still builds and simulates.
  if ! (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error); then
    echo "deps: speedscope installation failed (only its trace import test needs it); run:" \
      " (cd $dir && npm ci --ignore-scripts)" >&2
  fi
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#PACKAGES[@]} packages present"
  install_speedscope
  exit 0
fi

apt_line="apt-get install -y --no-install-recommends ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo"
  else
    echo "deps: missing packages: ${missing[*]}" >&2
    echo "deps: run as root:  apt-get update && $apt_line" >&2
    exit 1
  fi
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! { $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"; }; then
  echo "deps: installation failed; run:  apt-get update && $apt_line" >&2
  exit 1
fi
install_speedscope
