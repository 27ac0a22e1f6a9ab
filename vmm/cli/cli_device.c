/* cli_device.c — -device: QEMU's DRIVER[,prop=value...], the help verbs
 * (help, NAME,help) and the devices parsed here (isa-debug-exit,
 * pc-testdev, pvpanic); the rest go to their families' parsers. */
#include <stdio.h>
#include <string.h>

#include "vmm/cli/cli.h"

/* ----------------------------------------------------------- -device */

static int debug_exit_prop(struct device_spec *d, const char *key, const char *val, char *err,
			   size_t errlen)
{
	uint64_t v;

	if (strcmp(key, "iobase") && strcmp(key, "iosize")) {
		snprintf(err, errlen, "isa-debug-exit: unknown property '%s' (iobase, iosize)",
			 key);
		return -1;
	}
	if (cli_parse_u64(val, &v) < 0 || v > 0xffff ||
	    (!strcmp(key, "iosize") && (v < 1 || v > 4))) {
		snprintf(err, errlen, "isa-debug-exit: invalid %s '%s'", key, val);
		return -1;
	}
	if (!strcmp(key, "iobase"))
		d->iobase = (uint16_t)v;
	else
		d->iosize = (uint16_t)v;
	return 0;
}

/* QEMU's test device for kvm-unit-tests: no properties but id=. */
static int add_testdev(struct vmm_config *cfg, char *props, char *err, size_t errlen)
{
	char *key, *v;

	while (cli_next_kv(&props, &key, &v))
		if (strcmp(key, "id")) {
			snprintf(err, errlen, "pc-testdev: no property '%s' (it has none)", key);
			return -1;
		}
	if (cfg->n_devices == CLI_MAX_DEVICES) {
		snprintf(err, errlen, "too many devices");
		return -1;
	}
	cfg->devices[cfg->n_devices++] = (struct device_spec){.kind = DEVICE_PC_TESTDEV};
	return 0;
}

/* "help" or "?" (QEMU takes both). */
bool cli_is_help(const char *s)
{
	return !strcmp(s, "help") || !strcmp(s, "?");
}

/* Whether a later comma-separated item of val asks for help. */
static bool asks_help(const char *val)
{
	for (const char *p = strchr(val, ','); p; p = strchr(p + 1, ',')) {
		size_t len = strcspn(p + 1, ",");

		if ((len == 4 && !strncmp(p + 1, "help", 4)) || (len == 1 && p[1] == '?'))
			return true;
	}
	return false;
}

CLI_CONTROL_PARSER(cli_parse_device)
{
	struct device_spec *d;
	char buf[512], base[64], *save = NULL, *tok;

	if (strlen(val) >= sizeof(buf)) {
		snprintf(err, errlen, "value too long");
		return -1;
	}
	strcpy(buf, val);
	tok = strtok_r(buf, ",", &save);
	if (tok && cli_is_help(tok)) {
		cfg->help_topic = CLI_HELP_DEVICES;
		return 0;
	}
	if (tok && asks_help(val)) { /* -device NAME,help */
		cfg->help_topic = CLI_HELP_DEVICE;
		snprintf(cfg->help_device, sizeof(cfg->help_device), "%s", tok);
		return 0;
	}
	if (tok && cli_virtio_non_transitional(tok, base, sizeof(base)))
		tok = base;
	else if (tok && !strncmp(tok, "virtio-", 7) && strstr(tok, "-pci-transitional")) {
		snprintf(err, errlen,
			 "%s: vmm's virtio devices are modern only (virtio 1.x, no legacy "
			 "interface); use %.*s-pci",
			 tok, (int)(strstr(tok, "-pci-transitional") - tok), tok);
		return -1;
	}
	if (tok && cli_device_help_find(tok)) /* QEMU's aliases: virtio-net, virtio-blk */
		tok = (char *)cli_device_help_find(tok)->name;
	if (tok && !strcmp(tok, "pc-testdev"))
		return add_testdev(cfg, save, err, errlen);
	if (tok && !strcmp(tok, "virtio-blk-pci"))
		return cli_parse_virtio_blk(cfg, save, err, errlen);
	if (tok && !strcmp(tok, "virtio-net-pci"))
		return cli_parse_virtio_net(cfg, save, err, errlen);
	if (tok && !strcmp(tok, "virtio-wlan-pci"))
		return cli_parse_virtio_wlan(cfg, save, err, errlen);
	if (tok && !strcmp(tok, "virtio-rng-pci")) /* cli_rng.c */
		return cli_parse_virtio_rng(cfg, save, err, errlen);
	if (tok && !strcmp(tok, "virtio-serial-pci")) /* cli_vserial.c */
		return cli_parse_virtio_serial(cfg, save, err, errlen);
	if (tok && (!strcmp(tok, "virtserialport") || !strcmp(tok, "virtconsole")))
		return cli_parse_vserport(cfg, tok, save, err, errlen);
	if (tok && !strcmp(tok, "virtio-balloon-pci")) /* cli_balloon.c */
		return cli_parse_virtio_balloon(cfg, save, err, errlen);
	if (tok && !strcmp(tok, "isa-serial")) /* cli_libvirt.c */
		return cli_parse_isa_serial(cfg, save, err, errlen);
	if (tok && !strcmp(tok, "intel-iommu")) /* cli_iommu.c */
		return cli_parse_intel_iommu(cfg, save, err, errlen);
	if (tok && !strcmp(tok, "pcie-root-port")) /* cli_pcie.c */
		return cli_parse_pcie_root_port(cfg, save, err, errlen);
	if (tok && (!strcmp(tok, "ahci") || !strcmp(tok, "ich9-ahci"))) /* cli_sata.c */
		return cli_parse_ahci(cfg, save, err, errlen);
	if (tok && (!strcmp(tok, "ide-hd") || !strcmp(tok, "ide-cd")))
		return cli_parse_ide_device(cfg, save, !strcmp(tok, "ide-cd"), err, errlen);
	if (tok && !strcmp(tok, "edu"))
		return cli_parse_edu(cfg, save, err, errlen);
	if (tok && !strcmp(tok, "piix3-usb-uhci")) /* cli_usb.c */
		return cli_parse_usb_uhci(cfg, save, err, errlen);
	if (tok && !strcmp(tok, "qemu-xhci"))
		return cli_parse_usb_xhci(cfg, save, err, errlen);
	if (tok && !strcmp(tok, "pci-testdev"))
		return cli_parse_pci_testdev(cfg, save, err, errlen);
	if (!tok || (strcmp(tok, "isa-debug-exit") && strcmp(tok, "pvpanic"))) {
		char names[256] = "";
		const struct cli_device_help *h;

		for (size_t i = 0; (h = cli_device_help_at(i)); i++) /* -device help's list */
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 i ? ", " : "", h->name);
		snprintf(err, errlen, "unknown device '%s' (supported: %s)", tok ? tok : val,
			 names);
		return -1;
	}
	if (cfg->n_devices == CLI_MAX_DEVICES) {
		snprintf(err, errlen, "too many devices");
		return -1;
	}
	d = &cfg->devices[cfg->n_devices];
	if (!strcmp(tok, "pvpanic")) { /* cli_control.c */
		if (cli_parse_pvpanic(d, save, err, errlen) < 0)
			return -1;
		cfg->n_devices++;
		return 0;
	}
	*d = (struct device_spec){.kind = DEVICE_ISA_DEBUG_EXIT,
				  .iobase = 0x501,
				  .iosize = 2,
				  .devfn = -1}; /* QEMU's defaults */
	while ((tok = strtok_r(NULL, ",", &save))) {
		char *eq = strchr(tok, '=');

		if (!eq) {
			snprintf(err, errlen, "isa-debug-exit: expected key=value, got '%s'", tok);
			return -1;
		}
		*eq = 0;
		if (debug_exit_prop(d, tok, eq + 1, err, errlen) < 0)
			return -1;
	}
	cfg->n_devices++;
	return 0;
}
