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
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$root[test]" >&2
    echo "$want" > "$stamp"
fi
echo "$venv"
