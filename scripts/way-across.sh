#!/bin/sh
# docs/deploying.md#moving-the-index, followed step by step (CI runs it: e2e/way-across.spec.ts).
# Moves the index of an embedded store to PostgreSQL and starts two instances on it.
#
#   FROM_DATA_DIR   the embedded store's folder (IDENT_DATA_DIR of the app, which is stopped)
#   TO_DATABASE_URL an empty PostgreSQL database (IDENT_DATABASE_URL of the fleet)
#   PORT_A, PORT_B  where the two instances listen
#   CHECK_DOMAIN    an entity the index holds, asked of both instances at the end
#
# Everything else (IDENT_CONNECT_TO, NODE_EXTRA_CA_CERTS, …) is passed to the instances as it is.
set -eu
cd "$(dirname "$0")/.."
work=$(mktemp -d)
pids=""
cleanup() {
  for pid in $pids; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

say() { printf 'way-across: %s\n' "$*"; }

# Step 1. With the app stopped, export the embedded store (it refuses while the app holds it).
say "1. export the embedded store"
env -u IDENT_DATABASE_URL IDENT_DATA_DIR="$FROM_DATA_DIR" npx --no-install ident store export "$work/index.ndjson"

# Step 2. Import it into the empty PostgreSQL database (it refuses a database that holds entities).
say "2. import into PostgreSQL"
env -u IDENT_DATA_DIR IDENT_DATABASE_URL="$TO_DATABASE_URL" npx --no-install ident store import "$work/index.ndjson"

# Step 3. Check that nothing was lost: an export of the new store is the same file, byte for byte.
say "3. compare an export of PostgreSQL with the first"
env -u IDENT_DATA_DIR IDENT_DATABASE_URL="$TO_DATABASE_URL" npx --no-install ident store export "$work/again.ndjson"
cmp "$work/index.ndjson" "$work/again.ndjson"

# Step 4. Start the fleet's instances on the database (npm start, as the service files do).
say "4. start two instances"
for port in "$PORT_A" "$PORT_B"; do
  env -u IDENT_DATA_DIR IDENT_DATABASE_URL="$TO_DATABASE_URL" PORT="$port" IDENT_METRICS_ADDR="127.0.0.1:$((port + 6000))" node --max-semi-space-size=16 web/serve.js >"$work/app-$port.log" 2>&1 &
  pids="$pids $!"
done

# Step 5. Wait until each is ready, then ask both for the entity's recorded history: the same answer.
say "5. check both instances"
for port in "$PORT_A" "$PORT_B"; do
  tries=0
  until curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -gt 300 ]; then
      say "the instance on $port is not ready after 60 s:"
      cat "$work/app-$port.log"
      exit 1
    fi
    sleep 0.2
  done
done
curl -fsS "http://127.0.0.1:$PORT_A/api/entity/$CHECK_DOMAIN/history" >"$work/a.json"
curl -fsS "http://127.0.0.1:$PORT_B/api/entity/$CHECK_DOMAIN/history" >"$work/b.json"
cmp "$work/a.json" "$work/b.json"
grep -q "\"domain\":\"$CHECK_DOMAIN\"" "$work/a.json"
say "done: $(wc -l <"$work/index.ndjson") lines moved; both instances answer $CHECK_DOMAIN's history from PostgreSQL"
