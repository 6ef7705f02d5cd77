#!/usr/bin/env bash
# Makes sure the system parts that `make test` needs are on this machine.
# Each step is idempotent and says what it does on stderr; a part that cannot be had
# stops here with a clear message instead of letting its tests skip silently.
set -euo pipefail

need_apt=()
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)
if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/initdb" ]; then need_apt+=(postgresql); fi
if ! command -v chromium >/dev/null 2>&1; then need_apt+=(chromium); fi

if [ ${#need_apt[@]} -gt 0 ]; then
  echo "ensure-system: installing ${need_apt[*]} from Debian's packages" >&2
  if [ "$(id -u)" != 0 ]; then
    echo "ensure-system: need root to apt-get install ${need_apt[*]}" >&2; exit 1
  fi
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >&2
fi
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
echo "ensure-system: PostgreSQL binaries at $pg_bin; chromium at $(command -v chromium)" >&2
