# place.sh — sourced by tests/run.sh and bench/run.sh: where work that needs
# /dev/kvm runs. kvm_place prints `native`, `nested` (scripts/nested-kvm/run.sh)
# or `skip:REASON`, from VMM_TEST_NESTED: auto (default: native when
# /dev/kvm opens, else nested when QEMU is there), always (nested even where
# /dev/kvm works, so both paths stay tested), never.
# kvm_place_test PLACE TEST refines auto for one test: where the host's KVM
# emulates guest ring 0 (kvm_pvm, docs/test-hosts.md) a test that boots
# Linux, marked with a line `# needs: native ring 0`, goes nested: Debian's
# kernel there had not left its decompressor after 12 min, where QEMU's
# TCG is through it in 5 s.

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

ring0_emulated() { [ -d /sys/module/kvm_pvm ]; }

kvm_place_test() {
	if [ "$1" = native ] && [ "${VMM_TEST_NESTED:-auto}" = auto ] && ring0_emulated &&
		grep -q '^# needs: native ring 0' "$2" 2>/dev/null &&
		command -v qemu-system-x86_64 >/dev/null; then
		echo nested
	else
		echo "$1"
	fi
}
