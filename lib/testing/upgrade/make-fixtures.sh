#!/usr/bin/env bash
# Writes the upgrade test's databases (lib/cli/upgrade.itest.ts) with the code of a tagged
# release: its own migrations, its own demo data, an admin and a token made by its own command
# line. Run from the project root, with a PostgreSQL server to write the PostgreSQL one on:
#
#   bash lib/testing/upgrade/make-fixtures.sh v0.3.0 postgresql://user:pass@127.0.0.1:5432/postgres
#
# It leaves lib/testing/upgrade/<tag>.sqlite.gz, <tag>.pgdump and <tag>.json (the sign-in and
# the token) to commit.
set -euo pipefail
tag="${1:?usage: make-fixtures.sh TAG POSTGRES_ADMIN_URL}"
admin_url="${2:?usage: make-fixtures.sh TAG POSTGRES_ADMIN_URL}"
here="$(pwd)"
out="$here/lib/testing/upgrade"
work="$(mktemp -d)"
trap 'git -C "$here" worktree remove --force "$work/code" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

git -C "$here" worktree add --detach "$work/code" "$tag" >/dev/null
cp -al "$here/node_modules" "$work/code/node_modules"
cd "$work/code"
npm run --silent db:generate >/dev/null
cli() { node node_modules/tsx/dist/cli.mjs --conditions=react-server lib/cli/index.ts "$@"; }

write() { # DATABASE_URL
  export DATABASE_URL="$1" CHECKPOINT_KEY_FILE="$work/checkpoint.pem"
  cli db:deploy >/dev/null
  cli demo:load >/dev/null
  cli users:add --email upgrade-admin@reconcile.test --password upgrade-password-0123 --role admin >/dev/null
  cli tokens:add --email upgrade-admin@reconcile.test --scopes ingest,read,export,review,admin --name upgrade | tail -1
}

token="$(write "file:$work/release.db")"
gzip -9 -c "$work/release.db" > "$out/$tag.sqlite.gz"

db="reconcile_fixture_${tag//[^a-zA-Z0-9]/_}"
psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
pg_url="${admin_url%/*}/$db"
pg_token="$(write "$pg_url")"
pg_dump --format=custom --no-owner --no-privileges --file="$out/$tag.pgdump" "$pg_url"
psql -q "$admin_url" -c "DROP DATABASE $db"

cat > "$out/$tag.json" <<JSON
{ "tag": "$tag", "commit": "$(git rev-parse HEAD)", "email": "upgrade-admin@reconcile.test", "password": "upgrade-password-0123", "sqlite_token": "$token", "postgresql_token": "$pg_token" }
JSON
echo "wrote $out/$tag.sqlite.gz, $tag.pgdump and $tag.json"
