# python3.inc.sh — sourced by tests/run.sh and bench/run.sh: use_debian_python3
# DIR puts DIR/python3 -> /usr/bin/python3 first on PATH (exported) when
# python3 on PATH is something else. Debian's interpreter (install-deps
# installs it), started directly: a version manager's shim (pyenv's runs
# `pyenv exec` through a dozen shell processes) took 15-20 s a start in a
# nested L1, where every QMP step of a test or benchmark starts python3;
# Debian's takes 2-4 s there.
use_debian_python3() {
	[ -x /usr/bin/python3 ] || return 0
	[ "$(readlink -f "$(command -v python3)")" != "$(readlink -f /usr/bin/python3)" ] || return 0
	mkdir -p "$1"
	ln -sf /usr/bin/python3 "$1/python3"
	PATH=$(cd "$1" && pwd):$PATH
	export PATH
}
