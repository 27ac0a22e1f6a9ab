# seabios-serial.inc.sh — sourced by the SeaBIOS boot tests.
#
# SeaBIOS mirrors its screen on COM1 under -nographic through a buffer that
# a timer flushes, so whether the end of "Booting from Hard Disk..." (the
# last dot and the line break) reaches the line before the boot sector
# writes its own bytes depends on timing: natively it usually does not, on
# emulated hosts (the nested runner) it often does, under QEMU as under vmm.
# unflushed OUTPUT prints OUTPUT with that tail and all line breaks removed,
# so that outputs compare equal whatever the timer did.
unflushed() {
	printf '%s' "$1" | tr -d '\r\n' | sed 's/Hard Disk\.\.\.\{0,1\}/Hard Disk../'
}
