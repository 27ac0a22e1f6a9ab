# q35-libvirt-args.inc.sh — sourced: sets the positional parameters to
# the device lines libvirt 9.0 writes for virt-install's default q35
# domain (virtinst 4.1, captured by tests/integration/virt-install.sh):
# fourteen pcie-root-ports, qemu-xhci, virtio-serial with the guest
# agent's port on $work/ga.sock, virtio-blk on $work/disk.img, virtio-net
# on user networking, balloon and rng, each behind its own root port.
set -- -machine pc-q35-7.2,usb=off,dump-guest-core=off -m 512 -smp 2,sockets=2,cores=1,threads=1 \
	-nodefaults -no-hpet -global ICH9-LPC.disable_s3=1 -global ICH9-LPC.disable_s4=1
port=8
for slot in 1 2; do
	for fn in 0 1 2 3 4 5 6 7; do
		[ $port -le 21 ] || break
		mf=
		[ $fn = 0 ] && mf='"multifunction":true,'
		addr="0x$slot"
		[ $fn = 0 ] || addr="0x$slot.0x$fn"
		set -- "$@" -device "{\"driver\":\"pcie-root-port\",\"port\":$port,\"chassis\":$((port - 7)),\"id\":\"pci.$((port - 7))\",\"bus\":\"pcie.0\",${mf}\"addr\":\"$addr\"}"
		port=$((port + 1))
	done
done
set -- "$@" \
	-device '{"driver":"qemu-xhci","p2":15,"p3":15,"id":"usb","bus":"pci.2","addr":"0x0"}' \
	-device '{"driver":"virtio-serial-pci","id":"virtio-serial0","bus":"pci.3","addr":"0x0"}' \
	-blockdev "{\"driver\":\"file\",\"filename\":\"$work/disk.img\",\"node-name\":\"libvirt-1-storage\",\"auto-read-only\":true,\"discard\":\"unmap\"}" \
	-blockdev '{"node-name":"libvirt-1-format","read-only":false,"driver":"raw","file":"libvirt-1-storage"}' \
	-device '{"driver":"virtio-blk-pci","bus":"pci.4","addr":"0x0","drive":"libvirt-1-format","id":"virtio-disk0"}' \
	-netdev '{"type":"user","id":"hostnet0"}' \
	-device '{"driver":"virtio-net-pci","netdev":"hostnet0","id":"net0","mac":"52:54:00:e2:7a:31","bus":"pci.1","addr":"0x0"}' \
	-chardev "socket,id=charchannel0,path=$work/ga.sock,server=on,wait=off" \
	-device '{"driver":"virtserialport","bus":"virtio-serial0.0","nr":1,"chardev":"charchannel0","id":"channel0","name":"org.qemu.guest_agent.0"}' \
	-device '{"driver":"virtio-balloon-pci","id":"balloon0","bus":"pci.5","addr":"0x0"}' \
	-object '{"qom-type":"rng-random","id":"objrng0","filename":"/dev/urandom"}' \
	-device '{"driver":"virtio-rng-pci","rng":"objrng0","id":"rng0","bus":"pci.6","addr":"0x0"}'
