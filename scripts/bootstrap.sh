#!/usr/bin/env bash
# Create .venv beside the checkout and install the project with its test extras.
# Re-installs only when pyproject.toml changed, so repeated commands start fast.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${FFL_VENV:-$root/.venv}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
stamp="$venv/.ffl-installed"
want="$(sha256sum "$root/pyproject.toml" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    log="$venv/install.log"
    echo "installing the project and its test tools into $venv (first run; log: $log)" >&2
    if ! { "$venv/bin/python" -m pip install --disable-pip-version-check --upgrade pip &&
           "$venv/bin/python" -m pip install --disable-pip-version-check -e "$root[test]"; } >"$log" 2>&1; then
        tail -n 40 "$log" >&2
        echo "install failed; the whole log is $log" >&2
        exit 1
    fi
    echo "$want" > "$stamp"
fi
echo "$venv"
