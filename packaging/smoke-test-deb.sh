#!/usr/bin/env bash
# Builds the .deb with CPack, unpacks it into a scratch root (nothing is installed on
# the machine) and checks what a user gets: the files, the CLI on the bundled model,
# and the app starting offscreen on a fresh profile, creating its database and
# registering the bundled models there.
#
#   packaging/smoke-test-deb.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: smoke-test-deb.sh BUILD_DIR}" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

(cd "$build" && cpack -G DEB >"$scratch/cpack.log" 2>&1) || { cat "$scratch/cpack.log"; exit 1; }
deb=$(ls -t "$build"/baton_*.deb | sed -n 1p) # sed reads it all: no SIGPIPE under pipefail
dpkg-deb -x "$deb" "$scratch/root"
for f in usr/bin/baton usr/bin/baton-cli usr/lib/baton/baton_spm.so \
         usr/share/applications/baton.desktop usr/share/icons/hicolor/scalable/apps/baton.svg \
         usr/share/baton/models/baton-mini/model.safetensors; do
  [[ -e "$scratch/root/$f" ]] || { echo "FAIL: the package lacks $f"; exit 1; }
done
# Whole outputs in variables: piping a command into a quiet grep under pipefail fails when grep exits
# first and the command dies of SIGPIPE (a flake that depends on timing).
info=$(dpkg-deb -I "$deb")
[[ $info == *Depends:*libtorch* ]] || { echo "FAIL: no libtorch dependency"; exit 1; }
[[ $info == *Depends:*libcpp-httplib* ]] || { echo "FAIL: no cpp-httplib dependency (baton-cli serve)"; exit 1; }

export HOME="$scratch/home" XDG_DATA_HOME="$scratch/home/data" XDG_CONFIG_HOME="$scratch/home/config"
export XDG_RUNTIME_DIR="$scratch/run" QT_QPA_PLATFORM=offscreen BATON_MODELS_DIR=
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
cli_info=$("$scratch/root/usr/bin/baton-cli" info)
[[ $cli_info == *"$scratch/root/usr/share/baton/models/baton-mini"* ]] ||
  { echo "FAIL: baton-cli does not find its bundled model"; exit 1; }
"$scratch/root/usr/bin/baton-cli" generate --max-tokens 8 --seed 1 --prompt "Once upon a time" >/dev/null

# The app starts, makes its database and registers the bundled models, and keeps
# running. Polled (up to 120 s), not a fixed sleep: a loaded machine starts slowly.
db="$XDG_DATA_HOME/baton/baton.db"
"$scratch/root/usr/bin/baton" >"$scratch/app.log" 2>&1 &
app=$!
# Every model folder the package installs is registered by the app's first start.
expected=$(find "$scratch/root/usr/share/baton/models" -mindepth 2 -maxdepth 2 -name config.json | wc -l)
n=0
for _ in $(seq 240); do
  kill -0 "$app" 2>/dev/null || break
  if [[ -f "$db" ]]; then
    n=$(sqlite3 "$db" "SELECT count(*) FROM models WHERE path LIKE '$scratch/root/usr/share/baton/models/%'" 2>/dev/null || echo 0)
    [[ "$n" == "$expected" ]] && break
  fi
  sleep 0.5
done
if ! kill -0 "$app" 2>/dev/null; then
  wait "$app" && rc=0 || rc=$?
  echo "FAIL: the app exited with $rc"; cat "$scratch/app.log"; exit 1
fi
kill "$app"; wait "$app" 2>/dev/null || true
[[ -f "$db" ]] || { echo "FAIL: no database at $db"; exit 1; }
((expected >= 2)) || { echo "FAIL: the package installs $expected bundled models"; exit 1; }
[[ "$n" == "$expected" ]] || { echo "FAIL: $n bundled models registered, expected $expected"; exit 1; }
echo "package ok: $(basename "$deb"), $(du -h "$deb" | cut -f1)"
