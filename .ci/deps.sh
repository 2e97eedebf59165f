#!/usr/bin/env bash
# Installs what building (and, with "test", testing) Longhaul needs and is
# missing. Safe to run again: it only acts on what is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
purpose=${1:-run}

need_go="1.26"
need_node="20.19"

die() { echo "longhaul deps: $*" >&2; exit 1; }
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }

# Go and Node come from the official installers, not apt: Debian's are too old.
command -v go >/dev/null || die "Go $need_go+ is required: https://go.dev/doc/install"
go_version=$(go env GOVERSION | sed 's/^go//')
version_ge "$go_version" "$need_go" || die "Go $need_go+ is required (found $go_version): https://go.dev/doc/install"
command -v node >/dev/null && command -v npm >/dev/null || die "Node.js $need_node+ and npm are required: https://nodejs.org/en/download"
node_version=$(node --version | sed 's/^v//')
version_ge "$node_version" "$need_node" || die "Node.js $need_node+ is required (found $node_version)"

packages=(build-essential pkg-config libgtk-3-dev libwebkit2gtk-4.1-dev)
if [ "$purpose" = test ]; then
  # A real browser for the UI test, a virtual display and session bus for the window test.
  packages+=(chromium xvfb xauth dbus dbus-x11 xdotool x11-utils imagemagick curl)
  # A private Secret Service for the keychain tests (store/keychain/keychaintest).
  packages+=(gnome-keyring)
  # The desktop smoke test closes the window as a window manager would (python3 + libX11).
  packages+=(python3)
  # ...and signs a release for the self-update run.
  packages+=(openssl)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || die "missing packages (${missing[*]}) and no apt-get: install them with your package manager"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "missing packages (${missing[*]}): run as root or install sudo"
    sudo="sudo"
  fi
  echo "Installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# npm ci only when the lock file changed since the last install.
stamp=frontend/node_modules/.longhaul-lock
if [ ! -f "$stamp" ] || ! cmp -s frontend/package-lock.json "$stamp"; then
  (cd frontend && npm ci --no-audit --no-fund --loglevel=error)
  cp frontend/package-lock.json "$stamp"
fi
go mod download
