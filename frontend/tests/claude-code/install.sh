#!/usr/bin/env bash
# Installs the pinned Claude Code CLI into this folder (node_modules/.bin/claude) for
# claude-code.e2e.mjs. Only when package-lock.json changed since the last install, or the binary
# is missing: it is a ~400 MB native binary, downloaded once and then kept.
set -euo pipefail
cd "$(dirname "$0")"
stamp=node_modules/.longhaul-lock
if [ -f "$stamp" ] && cmp -s package-lock.json "$stamp" && [ -x node_modules/.bin/claude ]; then
  exit 0
fi
# --ignore-scripts, then install.cjs by hand: npm 11 does not run a dependency's postinstall
# unless allowed and older npm does, so each npm would leave a different binary in place.
# install.cjs copies the native binary of this platform (an optional dependency the lock pins)
# over the package's bin/claude.exe placeholder. The package asks for Node 22 but runs no
# JavaScript once installed (the binary is native), so Node 20 (.ci/deps.sh) does.
npm ci --ignore-scripts --engine-strict=false --no-audit --no-fund --loglevel=error
node node_modules/@anthropic-ai/claude-code/install.cjs
# install.cjs leaves the placeholder (and exits 0) when no native binary fits this platform:
# running it says so, before the stamp is written.
version=$(node_modules/.bin/claude --version)
echo "claude-code e2e: installed Claude Code $version"
cp package-lock.json "$stamp"
