#!/bin/sh
# install-deps.sh [GROUP...] — install the Debian packages vmm needs, only those missing.
# Groups: build (default), check, linux, bench, nested, demo, fuzz. `make check`
# asks for build+check (check includes nested), `make check-linux` for linux,
# `make demo` for demo (build+nested: Debian's kernel is the demo's guest),
# `make bench` for bench. nested is what scripts/nested-kvm/ needs to run
# the KVM tests on machines without /dev/kvm: Debian's kernel, busybox and
# QEMU; its test runs on every machine, so check always installs it.
# libvirt-daemon-system is there for the libvirt-qemu user libvirtd insists on
# (tests/integration/libvirt.sh runs its own libvirtd; nothing is started).
# mmdebstrap builds the Debian 12 disk (scripts/debian-disk.sh) the check group tests.
# qemu-guest-agent: its qemu-ga goes into the demo guest for virtio-serial.sh.
# virtinst: virt-install writes the domains tests/integration/virt-install.sh runs.
# hostapd, wpasupplicant, iw: the AP and station of linux-wlan-debian.sh's
# guest (Debian's kernel on the virtual WLAN).
set -eu

pkgs_build="build-essential pkg-config libfdt-dev libslirp-dev libglib2.0-dev check
	iso-codes wireless-regdb seabios libssl-dev libjansson-dev liblz4-dev liburing-dev libseccomp-dev
	zlib1g-dev libzstd-dev"
pkgs_check="openssl busybox-static iproute2 iputils-ping dnsmasq-base syslinux extlinux
	syslinux-common mtools dosfstools e2fsprogs fdisk qemu-utils grub-pc-bin python3
	qemu-system-x86 gdb strace xorriso isolinux mmdebstrap qemu-guest-agent
	libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients libvirt-daemon-system virtinst
	hostapd wpasupplicant iw"
pkgs_linux="linux-source-6.1 busybox-static bc flex bison libelf-dev lz4 cpio xz-utils
	kmod file patch hostapd wpasupplicant iw iproute2 wireless-regdb"
# make fuzz: clang with libFuzzer and the sanitizer runtimes.
pkgs_fuzz="clang"
pkgs_bench="iperf3 slirp4netns hyperfine strace valgrind"
pkgs_nested="qemu-system-x86 linux-image-amd64 busybox-static cpio xz-utils zstd kmod procps"

groups=${*:-build}
want=""
for g in $groups; do
	case "$g" in
	build) want="$want $pkgs_build" ;;
	check) want="$want $pkgs_build $pkgs_check $pkgs_nested" ;;
	linux) want="$want $pkgs_build $pkgs_linux" ;;
	bench) want="$want $pkgs_build $pkgs_check $pkgs_bench $pkgs_nested" ;;
	nested) want="$want $pkgs_nested" ;;
	demo) want="$want $pkgs_build $pkgs_nested" ;;
	fuzz) want="$want $pkgs_build $pkgs_fuzz" ;;
	*) echo "install-deps.sh: unknown group '$g' (build, check, linux, bench, nested, demo, fuzz)" >&2; exit 1 ;;
	esac
done

missing=""
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		case " $missing " in *" $p "*) ;; *) missing="$missing $p" ;; esac
	fi
done
[ -z "$missing" ] && exit 0

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	# sudo when it may ask (a terminal) or need not; otherwise say what to run.
	if command -v sudo >/dev/null && { [ -t 0 ] || sudo -n true 2>/dev/null; }; then
		SUDO=sudo
	else
		echo "install-deps.sh: missing Debian packages, and no root or sudo to install them." >&2
		echo "install-deps.sh: ask an administrator to run:" >&2
		echo "  apt-get update && apt-get install --no-install-recommends$missing" >&2
		exit 1
	fi
fi
echo "install-deps.sh: installing:$missing"
# apt-cache knows nothing before the first update on a fresh machine.
$SUDO apt-get update -q >/dev/null
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null
echo "install-deps.sh: done"
