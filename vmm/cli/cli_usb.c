/* cli_usb.c — the USB host controllers, as QEMU and libvirt spell them:
 *   -device piix3-usb-uhci[,id=][,bus=pci.0][,addr=SLOT[.FN]]
 *           [,multifunction=on|off][,bandwidth=N][,maxframes=N]
 *   -device qemu-xhci[,p2=N][,p3=N][,streams=on|off][,id=][,bus=pci.0]
 *           [,addr=SLOT[.FN]][,multifunction=on|off]
 *   -usb, -machine usb=on: a piix3-usb-uhci at 01.2, beside the PIIX3
 * libvirt writes the JSON forms of the first two (for --machine pc its
 * <controller type='usb' model='piix3-uhci'> is piix3-usb-uhci at 01.2,
 * for q35 model='qemu-xhci' with p2=15,p3=15). bandwidth and maxframes
 * tune UHCI frame scheduling and streams xHCI bulk streams, none of
 * which a controller without devices uses: they are accepted and checked
 * for their type only. */
#include <stdio.h>
#include <string.h>

#include "vmm/cli/cli.h"

#define UHCI_HELP                                                                                  \
	"id=, bus=pci.0|ROOT-PORT-ID, addr=SLOT[.FN], multifunction=on|off, bandwidth=N, "         \
	"maxframes=N"
#define XHCI_HELP                                                                                  \
	"p2=1-15, p3=1-15, streams=on|off, id=, bus=pci.0|pcie.0|ROOT-PORT-ID, addr=SLOT[.FN], "   \
	"multifunction=on|off"
#define PIIX3_UHCI_DEVFN (1 << 3 | 2) /* 01.2 */

/* The properties every PCI controller here takes: 1 taken, 0 not one of
 * them, -1 a bad value. */
static int pci_prop(struct device_spec *d, const char *key, const char *v, char *err, size_t errlen)
{
	bool b;

	if (!strcmp(key, "id"))
		return v && *v ? 1 : -1;
	if (!strcmp(key, "bus") || !strcmp(key, "addr")) /* pci.0/pcie.0 or a root port */
		return cli_pci_place(key, v, d->bus, sizeof(d->bus), &d->devfn, 1);
	if (!strcmp(key, "multifunction"))
		return cli_bool_value(key, v, &b, err, errlen) < 0 ? -1 : 1;
	return 0;
}

static int add_device(struct vmm_config *cfg, const struct device_spec *d, char *err, size_t errlen)
{
	if (cfg->n_devices == CLI_MAX_DEVICES) {
		snprintf(err, errlen, "too many devices");
		return -1;
	}
	cfg->devices[cfg->n_devices++] = *d;
	return 0;
}

static int bad_prop(const char *dev, const char *key, const char *v, const char *help, char *err,
		    size_t errlen)
{
	snprintf(err, errlen, "%s: invalid %s '%s' (%s)", dev, key, v ? v : "", help);
	return -1;
}

int cli_parse_usb_uhci(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	struct device_spec d = {.kind = DEVICE_USB_UHCI, .devfn = -1};
	char *key, *v;

	while (props && cli_next_kv(&props, &key, &v)) {
		int r = pci_prop(&d, key, v, err, errlen);
		uint64_t n;

		if (r < 0 || (r == 0 && ((strcmp(key, "bandwidth") && strcmp(key, "maxframes")) ||
					 !v || cli_parse_u64(v, &n) < 0 || n > UINT32_MAX)))
			return bad_prop("piix3-usb-uhci", key, v, UHCI_HELP, err, errlen);
	}
	return add_device(cfg, &d, err, errlen);
}

static bool port_count(const char *v, uint8_t *out)
{
	uint64_t n;

	if (!v || cli_parse_u64(v, &n) < 0 || n < 1 || n > 15)
		return false;
	*out = (uint8_t)n;
	return true;
}

int cli_parse_usb_xhci(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	struct device_spec d = {.kind = DEVICE_USB_XHCI, .devfn = -1, .usb_p2 = 4, .usb_p3 = 4};
	char *key, *v;
	bool b;

	while (props && cli_next_kv(&props, &key, &v)) {
		int r = pci_prop(&d, key, v, err, errlen);
		bool ok = r > 0;

		if (r == 0 && !strcmp(key, "p2"))
			ok = port_count(v, &d.usb_p2);
		else if (r == 0 && !strcmp(key, "p3"))
			ok = port_count(v, &d.usb_p3);
		else if (r == 0 && !strcmp(key, "streams"))
			ok = cli_bool_value(key, v, &b, err, errlen) == 0;
		if (!ok)
			return bad_prop("qemu-xhci", key, v, XHCI_HELP, err, errlen);
	}
	return add_device(cfg, &d, err, errlen);
}

int cli_add_default_usb(struct vmm_config *cfg, char *err, size_t errlen)
{
	struct device_spec d = {.kind = DEVICE_USB_UHCI, .devfn = PIIX3_UHCI_DEVFN};

	if (!cfg->lv.default_usb)
		return 0;
	if (cfg->q35) {
		snprintf(err, errlen,
			 "-usb on q35: vmm's q35 has no ICH9 USB controllers; use -device "
			 "qemu-xhci");
		return -1;
	}
	return add_device(cfg, &d, err, errlen);
}
