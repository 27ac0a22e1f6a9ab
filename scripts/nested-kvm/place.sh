# place.sh — sourced by tests/run.sh and bench/run.sh: where work that needs
# /dev/kvm runs. kvm_place prints `native`, `nested` (scripts/nested-kvm/run.sh)
# or `skip:REASON`, from VMM_TEST_NESTED: auto (default: native when
# /dev/kvm opens, else nested when QEMU is there), always (nested even where
# /dev/kvm works, so both paths stay tested), never.

# -c first: <> would create a plain file where the device is missing
kvm_opens() { [ -c /dev/kvm ] && (exec 3<>/dev/kvm) 2>/dev/null; }

kvm_place() {
	case "${VMM_TEST_NESTED:-auto}" in
	auto | always | never) ;;
	*) echo "skip:VMM_TEST_NESTED=$VMM_TEST_NESTED: want auto, always or never"; return ;;
	esac
	if [ "${VMM_TEST_NESTED:-auto}" != always ] && kvm_opens; then
		echo native
	elif [ "${VMM_TEST_NESTED:-auto}" = never ]; then
		echo "skip:/dev/kvm does not open here and VMM_TEST_NESTED=never"
	elif ! command -v qemu-system-x86_64 >/dev/null; then
		echo "skip:no /dev/kvm and no qemu-system-x86_64 for the nested runner"
	else
		echo nested
	fi
}
