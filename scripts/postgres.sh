#!/usr/bin/env bash
# Installs PostgreSQL from Debian when missing, starts its cluster, and makes the role and the
# database the server tests use. Prints the URL they take (STASIS_TEST_POSTGRES_URL).
# Usage: export STASIS_TEST_POSTGRES_URL=$(scripts/postgres.sh)
set -euo pipefail
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
if ! dpkg-query -W -f='${Status}' postgresql 2>/dev/null | grep -q "install ok installed"; then
  echo "installing: postgresql" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends postgresql postgresql-contrib >/dev/null
fi
version=$(ls /usr/lib/postgresql | sort -n | tail -1)
if ! pg_lsclusters -h | grep -q .; then
  $sudo pg_createcluster "$version" main >/dev/null
fi
cluster=$(pg_lsclusters -h | head -1 | awk '{print $1" "$2}')
port=$(pg_lsclusters -h | head -1 | awk '{print $3}')
if ! pg_lsclusters -h | head -1 | grep -q online; then
  $sudo pg_ctlcluster $cluster start >&2
fi
for _ in $(seq 1 60); do
  pg_isready -q -h 127.0.0.1 -p "$port" && break
  sleep 0.5  # waiting for a server we just started: there is nothing to synchronise on but its socket
done
as_postgres() { if [ "$(id -u)" -eq 0 ]; then su postgres -c "$1"; else sudo -u postgres bash -c "$1"; fi; }
as_postgres "psql -q -p $port -tc \"SELECT 1 FROM pg_roles WHERE rolname = 'stasis'\" | grep -q 1 || psql -q -p $port -c \"CREATE ROLE stasis LOGIN PASSWORD 'stasis' CREATEDB\"" >&2
as_postgres "psql -q -p $port -tc \"SELECT 1 FROM pg_database WHERE datname = 'stasis_test'\" | grep -q 1 || createdb -p $port -O stasis stasis_test" >&2
echo "postgres://stasis:stasis@127.0.0.1:$port/stasis_test"
