#!/usr/bin/env bash
# Runs the real desktop binary in a real window on a virtual display and checks
# that the window opens, the proxy serves, and the window's toggle (the Wails
# bindings, end to end) turns the proxy off. Usage: desktop-smoke.sh BINARY OUT.png
# Then the desktop shell: --minimized, single instance, the tray next to the
# window, close to the tray, remembered size and position, self-update.
set -euo pipefail
bin=$(realpath "$1")
shot=$(realpath -m "${2:-build/bin/desktop.png}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port=$(shuf -i 20000-45000 -n 1) # the proxy refuses to start if it is taken, failing loudly

# A stand-in tray host (owns org.kde.StatusNotifierWatcher, reads and clicks the
# tray menu over DBus) and a window manager's close button (WM_DELETE_WINDOW;
# there is no window manager on the virtual display).
(cd "$(dirname "$0")/.." && go build -o "$work/trayhost" ./app/tray/internal/traytest/cmd/trayhost)
cat > "$work/wmclose.py" <<'PY'
import ctypes, sys
x = ctypes.cdll.LoadLibrary("libX11.so.6")
x.XOpenDisplay.restype = ctypes.c_void_p
x.XOpenDisplay.argtypes = [ctypes.c_char_p]
x.XInternAtom.restype = ctypes.c_ulong
x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
class ClientMessage(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
                ("display", ctypes.c_void_p), ("window", ctypes.c_ulong), ("message_type", ctypes.c_ulong),
                ("format", ctypes.c_int), ("data", ctypes.c_long * 5)]
class Event(ctypes.Union):
    _fields_ = [("xclient", ClientMessage), ("pad", ctypes.c_long * 24)]
x.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long, ctypes.POINTER(Event)]
x.XFlush.argtypes = [ctypes.c_void_p]
x.XCloseDisplay.argtypes = [ctypes.c_void_p]
d = x.XOpenDisplay(None)
if not d:
    sys.exit("no display")
ev = Event()
ev.xclient.type = 33  # ClientMessage
ev.xclient.window = int(sys.argv[1])
ev.xclient.message_type = x.XInternAtom(d, b"WM_PROTOCOLS", 0)
ev.xclient.format = 32
ev.xclient.data[0] = x.XInternAtom(d, b"WM_DELETE_WINDOW", 0)
x.XSendEvent(d, int(sys.argv[1]), 0, 0, ctypes.byref(ev))
x.XFlush(d)
x.XCloseDisplay(d)
PY

# Self-update on the real app: v1.0.0 built with a loopback release source and
# a signing key; the release v2.0.0 as a release workflow would publish it.
root=$(cd "$(dirname "$0")/.." && pwd)
(cd "$root" && go build -o "$work/fakerelease" ./app/internal/releasetest/cmd/fakerelease)
mkdir -p "$work/upd/install" "$work/upd/v2" "$work/upd/rel"
openssl ecparam -name prime256v1 -genkey -noout -out "$work/upd/key.pem"
openssl ec -in "$work/upd/key.pem" -pubout -out "$work/upd/pub.pem" 2>/dev/null
rport=$(shuf -i 45001-60000 -n 1)
updflags="-X main.updateRepo=acme/longhaul -X main.updateAPI=http://127.0.0.1:$rport/api/v3/ -X main.updateKey=$(base64 -w0 "$work/upd/pub.pem")"
(cd "$root" && go build -tags desktop,production,webkit2_41 -trimpath -ldflags "-X main.version=1.0.0 $updflags" -o "$work/upd/install/longhaul" .)
(cd "$root" && go build -tags desktop,production,webkit2_41 -trimpath -ldflags "-X main.version=2.0.0 $updflags" -o "$work/upd/v2/longhaul" .)
asset="longhaul_2.0.0_$(go env GOOS)_$(go env GOARCH).tar.gz"
tar -C "$work/upd/v2" -czf "$work/upd/rel/$asset" longhaul
(cd "$work/upd/rel" && sha256sum "$asset" >checksums.txt && openssl dgst -sha256 -sign "$work/upd/key.pem" -out checksums.txt.sig checksums.txt)

inner="$work/inner.sh"
cat > "$inner" <<INNER
set -euo pipefail
export HOME="$work/home" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache"
mkdir -p "\$HOME" "\$XDG_DATA_HOME"
# A desktop session has an unlocked login keyring: give this one its own (in \$HOME), unlocked
# with a password on stdin, so the app keeps its secrets in a real Secret Service and no
# "create a keyring" prompt opens over the window.
printf 'longhaul-smoke' | gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null
for i in \$(seq 1 60); do
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true' && break
  sleep 0.5
done
"$bin" --data-dir "$work/longhaul" --port $port >"$work/app.log" 2>&1 &
app=\$!
fail() { echo "desktop smoke: \$*" >&2; cat "$work/app.log" >&2; import -window root "$shot" 2>/dev/null || true; kill \$app 2>/dev/null || true; exit 1; }
# stop_app ends the app as a session logout would (SIGTERM) and fails, with its goroutines,
# if it does not exit: a hang must fail the run, never stall it.
stop_app() {
  kill \$app
  for i in \$(seq 1 120); do kill -0 \$app 2>/dev/null || break; sleep 0.25; done
  if kill -0 \$app 2>/dev/null; then
    kill -QUIT \$app; sleep 1
    fail "the app did not exit within 30 s of SIGTERM"
  fi
  wait \$app || true
}
for i in \$(seq 1 120); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  kill -0 \$app 2>/dev/null || fail "the app exited"
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || fail "the proxy did not start"
! grep -q "no keychain answered" "$work/app.log" || fail "the desktop app found no keychain in a session with an unlocked Secret Service"
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
stop_app
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
stop_app
echo "desktop smoke: --minimized started hidden; a second launch exited and showed the first window"

# The tray in the real app, next to the window: its menu, its toggle, close
# hides the window to the tray, "Open window" shows it, "Quit" quits; the
# window's size and position are back on the next start.
mkfifo "$work/tray.in"
"$work/trayhost" <"$work/tray.in" >"$work/tray.out" 2>"$work/tray.err" &
exec 3>"$work/tray.in"
tray() { # prints the host's answer; fails on "error ..."
  local before reply
  before=\$(wc -l <"$work/tray.out")
  echo "\$*" >&3
  for i in \$(seq 1 300); do [ "\$(wc -l <"$work/tray.out")" -gt "\$before" ] && break; sleep 0.1; done
  reply=\$(tail -n1 "$work/tray.out")
  echo "\${reply#ok }"
  case "\$reply" in ok*) return 0;; *) cat "$work/tray.err" >&2; return 1;; esac
}
visible() { xdotool search --onlyvisible --name '^Longhaul\$' 2>/dev/null | head -n1 || true; }
wait_visible() { # \$1: yes or no
  for i in \$(seq 1 60); do
    win=\$(visible)
    { [ "\$1" = yes ] && [ -n "\$win" ]; } || { [ "\$1" = no ] && [ -z "\$win" ]; } && return 0
    sleep 0.25
  done
  return 1
}
wait_proxy() { # \$1: up or down
  for i in \$(seq 1 60); do
    if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then [ "\$1" = up ] && return 0; else [ "\$1" = down ] && return 0; fi
    sleep 0.25
  done
  return 1
}
"$bin" --data-dir "$work/longhaul" --port $port >"$work/app.log" 2>&1 &
app=\$!
wait_proxy up || fail "the proxy did not start (tray run)"
wait_visible yes || fail "no window (tray run)"
sleep 1 # let the window settle where the last run left it before moving it
item=\$(tray wait) || fail "the tray icon did not register: \$item"
menu=\$(tray menu) || fail "tray menu: \$menu"
case "\$menu" in "Listening on 127.0.0.1:$port · "*"|No active session|Proxy on [x]|Open window|Quit") ;; *) fail "tray menu is \$menu";; esac
r=\$(tray click "Proxy on") || fail "tray click: \$r"
wait_proxy down || fail "the tray's toggle did not stop the proxy"
menu=\$(tray menu) || fail "tray menu: \$menu"
case "\$menu" in "Proxy off · "*"|No active session|Proxy on|Open window|Quit") ;; *) fail "tray menu after stopping is \$menu";; esac
r=\$(tray click "Proxy on") || fail "tray click: \$r"
wait_proxy up || fail "the tray's toggle did not start the proxy"
xdotool windowmove "\$win" 20 30
xdotool windowsize "\$win" 1000 700
sleep 0.5
python3 "$work/wmclose.py" "\$win"
wait_visible no || fail "closing the window did not hide it"
sleep 0.5
kill -0 \$app 2>/dev/null || fail "closing the window quit the app although a tray shows it"
wait_proxy up || fail "the proxy stopped when the window closed to the tray"
r=\$(tray click "Open window") || fail "tray click: \$r"
wait_visible yes || fail "the tray's Open window did not show the window"
r=\$(tray click "Quit") || fail "tray click: \$r"
for i in \$(seq 1 40); do kill -0 \$app 2>/dev/null || break; sleep 0.25; done
kill -0 \$app 2>/dev/null && fail "the tray's Quit did not quit"
wait \$app || fail "the app quit from the tray with status \$?"
"$bin" --data-dir "$work/longhaul" --port $port >"$work/app.log" 2>&1 &
app=\$!
wait_visible yes || fail "no window (geometry run)"
# Until the window stands where it was left: while the app restores it, a search may find it
# unmapped for a moment (it did once under load, and xdotool then asked X about window 0).
geometry=
for i in \$(seq 1 60); do
  w=\$(visible)
  geometry=
  if [ -n "\$w" ]; then geometry=\$(xdotool getwindowgeometry "\$w" 2>/dev/null | tr -s ' \\n' ' ') || geometry=; fi
  case "\$geometry" in *"Position: 20,30 "*"Geometry: 1000x700"*) break;; esac
  sleep 0.25
done
case "\$geometry" in *"Position: 20,30 "*"Geometry: 1000x700"*) ;; *) fail "window not restored where it was: \$geometry";; esac
stop_app
echo "desktop smoke: tray menu and toggle work next to the window; close hid it to the tray; Open window and Quit worked; size and position restored"

# Self-update: 1.0.0 checks at start, installs 2.0.0 in its own place and
# offers the restart in the tray; the restart brings up 2.0.0.
"$work/fakerelease" -repo acme/longhaul -tag v2.0.0 -dir "$work/upd/rel" -addr 127.0.0.1:$rport >"$work/fakerelease.log" 2>&1 &
release=\$!
"$work/upd/install/longhaul" --data-dir "$work/upd/data" --port $port >"$work/app.log" 2>&1 &
app=\$!
item=\$(tray wait) || fail "the tray icon did not register (update run): \$item"
for i in \$(seq 1 150); do
  menu=\$(tray menu) || fail "tray menu: \$menu"
  case "\$menu" in *"|Restart to update (version 2.0.0)|"*) break;; esac
  sleep 0.2
done
case "\$menu" in *"|Restart to update (version 2.0.0)|"*) ;; *) kill \$release; fail "no restart offered after 30s: \$menu";; esac
[ "\$("$work/upd/install/longhaul" --version)" = "longhaul 2.0.0" ] || fail "the installed binary is not 2.0.0"
[ -z "\$(ls -A "$work/upd/install" | grep -v '^longhaul\$')" ] || fail "update leftovers: \$(ls -A "$work/upd/install")"
r=\$(tray click "Restart to update") || fail "tray click: \$r"
for i in \$(seq 1 80); do kill -0 \$app 2>/dev/null || break; sleep 0.25; done
kill -0 \$app 2>/dev/null && fail "Restart did not end the old process"
wait \$app || fail "the old process exited with \$?"
wait_proxy up || fail "the restarted app does not serve"
wait_visible yes || fail "the restarted app shows no window"
app=\$(pgrep -f "^$work/upd/install/longhaul --data-dir" | head -n1)
[ -n "\$app" ] || fail "no restarted process"
kill \$app; kill \$release
for i in \$(seq 1 40); do kill -0 \$app 2>/dev/null || break; sleep 0.25; done # not our child: no wait
exec 3>&-
echo "desktop smoke: 1.0.0 installed 2.0.0 (checksums and signature verified), offered the restart in the tray and came back as 2.0.0"
INNER
xvfb-run -a -s "-screen 0 1280x900x24" dbus-run-session -- bash "$inner"
