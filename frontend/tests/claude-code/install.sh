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
# over the package's bin/claude.exe placeholder.
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
node node_modules/@anthropic-ai/claude-code/install.cjs
echo "claude-code e2e: installed Claude Code $(node_modules/.bin/claude --version)"
cp package-lock.json "$stamp"
