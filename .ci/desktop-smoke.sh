#!/usr/bin/env bash
# Runs the real desktop binary in a real window on a virtual display and checks
# that the window opens, the proxy serves, and the window's toggle (the Wails
# bindings, end to end) turns the proxy off. Usage: desktop-smoke.sh BINARY OUT.png
set -euo pipefail
bin=$(realpath "$1")
shot=$(realpath -m "${2:-build/bin/desktop.png}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port=$(shuf -i 20000-45000 -n 1) # the proxy refuses to start if it is taken, failing loudly

inner="$work/inner.sh"
cat > "$inner" <<INNER
set -euo pipefail
export HOME="$work/home" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache"
mkdir -p "\$HOME"
"$bin" --data-dir "$work/longhaul" --port $port >"$work/app.log" 2>&1 &
app=\$!
fail() { echo "desktop smoke: \$*" >&2; cat "$work/app.log" >&2; import -window root "$shot" 2>/dev/null || true; kill \$app 2>/dev/null || true; exit 1; }
for i in \$(seq 1 120); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  kill -0 \$app 2>/dev/null || fail "the app exited"
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || fail "the proxy did not start"
win=""
for i in \$(seq 1 60); do
  win=\$(xdotool search --onlyvisible --name '^Longhaul\$' 2>/dev/null | head -n1 || true)
  [ -n "\$win" ] && break
  sleep 0.5
done
[ -n "\$win" ] || fail "no window titled Longhaul"
sleep 3 # let the page render and fetch its status
import -window root "$shot"
# The page must have drawn something: a blank window has no colour variance.
dev=\$(convert "$shot" -colorspace gray -format '%[fx:standard_deviation]' info:)
awk -v d="\$dev" 'BEGIN { exit !(d > 0.02) }' || fail "the window looks blank (stddev \$dev)"
# Tab to the first control (the proxy toggle) and press it: the window's
# binding must stop the proxy.
# (No window manager here: a click in an empty corner focuses the web view.)
xdotool mousemove --window "\$win" 8 8 click 1
sleep 0.3
xdotool key Tab
sleep 0.3
xdotool key space
for i in \$(seq 1 40); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 || break
  sleep 0.25
done
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && fail "the window's toggle did not stop the proxy"
sleep 1
import -window root "${shot%.png}-stopped.png"
kill \$app
wait \$app || true
echo "desktop smoke: window opened, page rendered, toggle stopped the proxy"

# Autostart's launch: --minimized starts in the tray, no window shown; a
# second launch on the same data exits at once and shows the first window.
"$bin" --data-dir "$work/longhaul" --port $port --minimized >"$work/app.log" 2>&1 &
app=\$!
for i in \$(seq 1 120); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  kill -0 \$app 2>/dev/null || fail "the minimized app exited"
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || fail "the proxy did not start (--minimized)"
sleep 3
[ -z "\$(xdotool search --onlyvisible --name '^Longhaul\$' 2>/dev/null)" ] || fail "--minimized showed a window"
timeout 20 "$bin" --data-dir "$work/longhaul" --port $port >"$work/second.log" 2>&1 || fail "the second launch did not exit cleanly: \$(cat "$work/second.log")"
win=""
for i in \$(seq 1 40); do
  win=\$(xdotool search --onlyvisible --name '^Longhaul\$' 2>/dev/null | head -n1 || true)
  [ -n "\$win" ] && break
  sleep 0.25
done
[ -n "\$win" ] || fail "a second launch did not show the first window"
[ "\$(xdotool search --name '^Longhaul\$' 2>/dev/null | wc -l)" -le 2 ] || fail "a second window opened"
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || fail "the first instance stopped serving"
kill \$app
wait \$app || true
echo "desktop smoke: --minimized started hidden; a second launch exited and showed the first window"
INNER
xvfb-run -a -s "-screen 0 1280x900x24" dbus-run-session -- bash "$inner"
