# find_python312: prints the first Python 3.12 with venv and ensurepip, from the PATH or pyenv, or
# nothing. Agent Zero's lock (vendor/openoperator/requirements-py312.lock) is for 3.12; used by
# scripts/test.sh (the OpenOperator venv) and scripts/images.sh (the OpenOperator base). Sourced.
# A pyenv shim answers `command -v` for a version that is not active, so each candidate is run.
find_python312() {
  local candidate
  for candidate in "$(command -v python3.12 || true)" \
    $(command -v pyenv >/dev/null 2>&1 && ls -d "$(pyenv root)"/versions/3.12.*/bin/python3.12 2>/dev/null | sort -V -r); do
    if [ -n "$candidate" ] && "$candidate" -c 'import sys, venv, ensurepip; assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1; then
      echo "$candidate"
      return
    fi
  done
}
