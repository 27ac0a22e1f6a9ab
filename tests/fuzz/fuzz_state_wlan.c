/* fuzz_state_wlan.c — the virtual WLAN's snapshot loaders on a state tree:
 * a virtio-wlan-pci device's outbox (`virtio-wlan@0`) and a medium with
 * two radio ports (`wlan-medium@0`: country, regulatory.db, radar
 * closures, radios with their interface addresses and CAC clocks) and the
 * log of what radios announced to the daemon (`wlan-relay@0`), on a fake
 * clock. An accepted tree is loaded into fresh ones, frames then
 * cross the medium on the loaded channels and go to the device, and what
 * each holds is saved again and must load back. */
#include <stdio.h>
#include <stdlib.h>

#include "devices/pci/pci.h"
#include "devices/virtio/virtio.h"
#include "state/state.h"
#include "tests/fake_host.h"
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/fuzz_state.h"
#include "wlan/wlan.h"

static struct fake_host host;
static struct pci_bus *bus;
static uint64_t clock_ns = 5000000000ull;

static uint64_t fake_now(void *opaque)
{
	return clock_ns;
}

static void nowhere(void *opaque, const void *msg, size_t len)
{
}

struct devs {
	struct virtio_hwsim *dev;
	struct wlan_medium *m;
	struct wlan_port *ports[2];
	struct wlan_vif_log vifs;
	bool dev_ok, medium_ok, vifs_ok;
};

static bool to_dev(void *opaque, const void *msg, size_t len)
{
	struct devs *d = opaque;

	return virtio_hwsim_receive(d->dev, msg, len);
}

static void *devs_new(void)
{
	const struct wlan_medium_cfg cfg = {
		.country = "DE", .cac_s = 60, .nop_s = 1800, .clock = fake_now};
	struct devs *d = calloc(1, sizeof(*d));
	char err[256];

	host.host.n_reset = 0; /* the freed devices' reset hooks */
	if (!d ||
	    !(d->dev = virtio_hwsim_new(&host.host, bus,
					&(struct virtio_hwsim_opts){3 << 3, nowhere, NULL}, err,
					sizeof(err))) ||
	    !(d->m = wlan_medium_new(&cfg, err, sizeof(err))) ||
	    !(d->ports[0] = wlan_port_attach(d->m, "a", to_dev, d)) ||
	    !(d->ports[1] = wlan_port_attach(d->m, "b", to_dev, d)))
		abort();
	return d;
}

static void devs_free(void *opaque)
{
	struct devs *d = opaque;

	wlan_port_close(d->ports[0]);
	wlan_port_close(d->ports[1]);
	virtio_hwsim_free(d->dev);
	wlan_port_detach(d->ports[0]);
	wlan_port_detach(d->ports[1]);
	wlan_medium_free(d->m);
	free(d);
}

static void devs_load(void *opaque, const struct state_reader *r)
{
	struct devs *d = opaque;
	char err[256];

	virtio_pci_freeze(virtio_hwsim_transport(d->dev));
	d->dev_ok = virtio_pci_load(virtio_hwsim_transport(d->dev), r, "virtio-wlan@0", err,
				    sizeof(err)) == 0;
	d->vifs_ok = wlan_vif_log_load(&d->vifs, r, "wlan-relay@0", err, sizeof(err)) == 0;
	d->medium_ok =
		wlan_medium_load(d->m, r, "wlan-medium@0", d->ports, 2, err, sizeof(err)) == 0;
	virtio_pci_thaw(virtio_hwsim_transport(d->dev));
}

/* Beacons and data from a loaded radio's address on the DFS and other
 * channels, before and after the CAC and NOP would have run out. */
static void devs_drive(void *opaque)
{
	static const uint32_t freqs[] = {2412, 5180, 5500, 5600, 5745};
	const uint8_t hw[6] = {0x42, 0, 0, 0, 0, 0},
		      bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct devs *d = opaque;
	uint8_t f[40] = {0}, msg[512];

	memcpy(f + 4, bcast, 6);
	for (unsigned round = 0; round < 2; round++) {
		for (unsigned i = 0; i < sizeof(freqs) / sizeof(freqs[0]); i++) {
			f[0] = i & 1 ? 0x08 : 0x80;
			size_t n = hwsim_build_tx(msg, sizeof(msg), hw, f, sizeof(f), 1, freqs[i],
						  20, i);

			wlan_port_input(d->ports[round], msg, n);
		}
		clock_ns += 3600ull * 1000000000ull;
	}
}

static void devs_save(void *opaque, struct state_writer *w)
{
	struct devs *d = opaque;
	char err[256];

	if (d->dev_ok &&
	    virtio_pci_save(virtio_hwsim_transport(d->dev), w, "virtio-wlan@0", err, sizeof(err)))
		abort();
	if (d->medium_ok)
		wlan_medium_save(d->m, w, "wlan-medium@0", d->ports, 2);
	if (d->vifs_ok)
		wlan_vif_log_save(&d->vifs, w, "wlan-relay@0");
}

static unsigned devs_loaded(const void *opaque)
{
	const struct devs *d = opaque;

	return d->dev_ok | d->medium_ok << 1 | d->vifs_ok << 2;
}

static const struct fuzz_state_ops ops = {"fuzz_state_wlan", devs_new,	devs_free,  devs_load,
					  devs_drive,	     devs_save, devs_loaded};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!host.ram && (fake_host_init(&host, 2 << 20) < 0 || !(bus = pci_bus_new(&host.host))))
		abort();
	return fuzz_state_round(&ops, data, size);
}
