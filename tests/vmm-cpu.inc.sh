# vmm-cpu.inc.sh — sourced by tests/run.sh and bench/run.sh: wrap_cpu VAR
# DEFAULT DIR makes $VAR (or DEFAULT) a wrapper script in DIR that starts vmm
# through tests/vmm-cpu.sh, which adds the conservative CPU model on hosts
# that need it, so that no test or benchmark has to. Exports VAR.
wrap_cpu() {
	eval "real=\${$1:-$2}"
	case $real in */cpu-wrap/*) return ;; /*) ;; *) real=$PWD/$real ;; esac
	mkdir -p "$3/cpu-wrap"
	w=$(cd "$3/cpu-wrap" && pwd)/$1
	printf '#!/bin/sh\nexec sh "%s" "%s" "$@"\n' "$PWD/tests/vmm-cpu.sh" "$real" >"$w"
	chmod +x "$w"
	eval "$1=\$w"
	export "$1"
}
