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
deb=$(ls -t "$build"/baton_*.deb | head -1)
dpkg-deb -x "$deb" "$scratch/root"
for f in usr/bin/baton usr/bin/baton-cli usr/lib/baton/baton_spm.so \
         usr/share/applications/baton.desktop usr/share/icons/hicolor/scalable/apps/baton.svg \
         usr/share/baton/models/baton-mini/model.safetensors; do
  [[ -e "$scratch/root/$f" ]] || { echo "FAIL: the package lacks $f"; exit 1; }
done
dpkg-deb -I "$deb" | grep -q "Depends:.*libtorch" || { echo "FAIL: no libtorch dependency"; exit 1; }

export HOME="$scratch/home" XDG_DATA_HOME="$scratch/home/data" XDG_CONFIG_HOME="$scratch/home/config"
export XDG_RUNTIME_DIR="$scratch/run" QT_QPA_PLATFORM=offscreen BATON_MODELS_DIR=
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
"$scratch/root/usr/bin/baton-cli" info | grep -q "$scratch/root/usr/share/baton/models/baton-mini" ||
  { echo "FAIL: baton-cli does not find its bundled model"; exit 1; }
"$scratch/root/usr/bin/baton-cli" generate --max-tokens 8 --seed 1 --prompt "Once upon a time" >/dev/null

# The app keeps running (timeout ends it: 124) and has made its database.
set +e
timeout 15 "$scratch/root/usr/bin/baton" >"$scratch/app.log" 2>&1
rc=$?
set -e
[[ $rc -eq 124 ]] || { echo "FAIL: the app exited with $rc"; cat "$scratch/app.log"; exit 1; }
db="$XDG_DATA_HOME/baton/baton.db"
[[ -f "$db" ]] || { echo "FAIL: no database at $db"; exit 1; }
n=$(sqlite3 "$db" "SELECT count(*) FROM models WHERE path LIKE '$scratch/root/usr/share/baton/models/%'")
[[ "$n" == 3 ]] || { echo "FAIL: $n bundled models registered, expected 3"; exit 1; }
echo "package ok: $(basename "$deb"), $(du -h "$deb" | cut -f1)"
