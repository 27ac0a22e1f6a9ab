/* firmware.h — what goes into guest memory before the first instruction:
 * the boot loaders (multiboot, Linux bzImage, PVH), the e820 map they share,
 * the MP and ACPI tables for direct boot, SeaBIOS location and fw_cfg content.
 * Nothing here issues ioctls: a loader writes guest RAM through struct
 * guest_mem and describes the boot CPU's initial state in boot_cpu_state,
 * which the machine (vmm/) turns into register ioctls via kernel/kvm.
 */
#ifndef VMM_FIRMWARE_H
#define VMM_FIRMWARE_H

#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"
#include "devices/isa/fw_cfg.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/pci.h"
#include "devices/timer/rtc.h"

/* ------------------------------------------------------------------ e820 */

enum e820_type {
	E820_RAM = 1,
	E820_RESERVED = 2,
	E820_ACPI = 3,
	E820_NVS = 4,
};

#define E820_MAX_ENTRIES 32

struct e820_entry {
	uint64_t addr, size;
	uint32_t type;
};

struct e820_map {
	struct e820_entry e[E820_MAX_ENTRIES];
	unsigned n;
};

/* The map of a PC with mem's RAM: E820_RAM for the RAM regions, with
 * [0x9fc00, 0xa0000) (EBDA) and [0xf0000, 0x100000) (BIOS) reserved and any
 * RAM in [0x9fc00, 1 MiB) reserved too; sorted, neighbours of one type
 * merged. 0, or -ENOSPC (too many entries) / -EINVAL (region wraps). */
int e820_build(const struct guest_mem *mem, struct e820_map *map);
/* Add a reserved range outside RAM (q35's ECAM window, which Linux wants
 * reserved before it uses the MCFG): 0 or -ENOSPC. */
int e820_reserve(struct e820_map *map, uint64_t start, uint64_t len);

/* ---------------------------------------------------------- boot state */

enum boot_mode {
	BOOT_MODE_RESET,	 /* real mode at the reset vector (firmware boot) */
	BOOT_MODE_PROT32_FLAT,	 /* 32-bit flat segments, paging off (multiboot, PVH) */
	BOOT_MODE_LONG64,	 /* 64-bit, identity page tables at cr3 (Linux 64-bit entry) */
};

/* The boot CPU's initial state as a loader wants it. Registers not listed
 * start at zero; rflags is 0x2. Segment setup follows from mode. */
struct boot_cpu_state {
	enum boot_mode mode;
	uint64_t rip, rsp;
	uint64_t rax, rbx, rcx, rdx, rsi, rdi;
	uint64_t cr3;		/* LONG64: root of page tables the loader wrote */
	uint64_t gdt_base;	/* PROT32/LONG64: a GDT the loader wrote, or 0 */
	uint16_t gdt_limit;
};

/* What the user asked to boot, and the machine it boots on. */
struct boot_request {
	const char *kernel_path;
	const uint8_t *kernel;	/* the whole file, read by the caller */
	size_t kernel_size;
	const char *initrd_path; /* NULL when none */
	const char *cmdline;	 /* never NULL ("" when none) */
	unsigned ncpus;
	const uint8_t *apic_ids; /* ncpus ascending APIC IDs (-smp's topology); NULL: 0..n-1 */
	struct guest_mem *mem;
	const struct e820_map *e820;
	bool no_acpi; /* -no-acpi: the MP table only */
	uint16_t pvpanic_port; /* -device pvpanic's, for the DSDT; 0: none */
	unsigned dmar;	       /* ACPI_DMAR_* for -device intel-iommu; 0: none */
	bool q35;	       /* -machine q35: its DSDT, MCFG, ICH9 set-up */
	bool no_s3;	       /* no _S3 in the DSDT (disable_s3=1) */
};

/* Every loader has this shape: 0 and *cpu filled; -ENOEXEC when the image
 * is not its format (the caller tries the next loader); any other -errno
 * with a one-line reason in err. */
typedef int (*boot_loader_fn)(const struct boot_request *req, struct boot_cpu_state *cpu,
			      char *err, size_t errlen);

/* ------------------------------------------------------------ multiboot */

/* Multiboot v1 (ELF32 or a.out-kludge kernels), laid out as QEMU does: the
 * memory map at 0x9000, the info at 0x9500, command lines and modules after
 * the kernel. req->initrd_path is QEMU's module list: "file args,file2"
 * (",," for a literal comma). The kernel command line the guest sees is
 * "<kernel_path> <cmdline>". Uses req->e820, or e820_build when NULL. */
int multiboot_load(const struct boot_request *req, struct boot_cpu_state *cpu, char *err,
		   size_t errlen);

/* ---------------------------------------------------- Linux direct boot
 * bzImage and PVH loaders, the MP and ACPI tables for direct boot. */

/* Where fw_tables_build puts the MP and ACPI tables: the last 4 KiB of
 * base memory, which the Linux/PVH loaders report as reserved in e820 and
 * which holds the EBDA (0x40e points here) so the MP floating pointer and
 * the RSDP are found by the BIOS-area scans too. */
#define FW_TABLES_GPA 0x9f000u
#define FW_TABLES_SIZE 0x1000u
#define FW_IOAPIC_GPA 0xfec00000u
#define FW_LAPIC_GPA 0xfee00000u
#define ACPI_PM_BASE 0x600u	/* PM1a_EVT at +0 (4 bytes), PM1a_CNT at +4 (2) */
#define ACPI_PM_LEN 8u
#define ACPI_SCI_IRQ 9u
#define ACPI_S3_SLP_TYP 1u	/* the _S3 value (QEMU's) */
#define ACPI_S5_SLP_TYP 5u	/* the _S5 value the DSDT hands the guest */

/* A CPU's APIC ID in an apic_ids list (NULL: the index), and the I/O
 * APIC's: the one after the last CPU's. */
static inline unsigned fw_apic_id(const uint8_t *apic_ids, unsigned i)
{
	return apic_ids ? apic_ids[i] : i;
}

static inline unsigned fw_ioapic_id(const uint8_t *apic_ids, unsigned ncpus)
{
	return fw_apic_id(apic_ids, ncpus - 1) + 1;
}

/* MP spec 1.4 floating pointer + configuration table for ncpus CPUs
 * (APIC ids from apic_ids), the IOAPIC (fw_ioapic_id) and ISA IRQs 0-15 identity-routed
 * to its pins, written into buf which the guest sees at gpa. Returns the
 * bytes used, or -ENOSPC / -EINVAL (ncpus 0 or > 255). */
/* The byte that makes the n bytes at p sum to zero (MP and ACPI checksums). */
uint8_t fw_checksum(const void *p, size_t n);
int mptable_build(uint8_t *buf, size_t len, uint32_t gpa, unsigned ncpus, const uint8_t *apic_ids);
/* ACPI 2.0+ tables (RSDP, XSDT, RSDT, FADT with a PM1 block at
 * ACPI_PM_BASE, FACS, DSDT with _S5, MADT for ncpus CPUs + IOAPIC + the
 * SCI source override; APIC IDs 0..n-1) into buf seen at gpa; the RSDP is first, at gpa.
 * With pvpanic_port, the DSDT also describes the pvpanic device there
 * (QEMU0001), so Linux's pvpanic driver binds. Returns bytes used or
 * -ENOSPC / -EINVAL. */
int acpi_build(uint8_t *buf, size_t len, uint32_t gpa, unsigned ncpus, uint16_t pvpanic_port);
/* The same for the CPUs' apic_ids (NULL: 0..n-1), with a DMAR table when
 * dmar has ACPI_DMAR_PRESENT:
 * one DRHD for the VT-d unit at INTEL_IOMMU_BASE with INCLUDE_PCI_ALL and
 * the I/O APIC (fw_ioapic_id) in its device scope as 0xff:00.0, host address
 * width 48, flags INTR_REMAP (and X2APIC_OPT_OUT) as given. */
#define ACPI_DMAR_PRESENT 1u
#define ACPI_DMAR_INTR_REMAP 2u
#define ACPI_DMAR_X2APIC_OPT_OUT 4u
#define ACPI_DMAR_IOAPIC_SID 0xff00u
/* Also in that flags word: the tables describe -machine q35 (PCI0 is a
 * PCIe root, PNP0A08, with the ICH9's INTx routing to GSIs 16-23, and an
 * MCFG table for the ECAM window at Q35_ECAM_BASE). */
#define ACPI_MACHINE_Q35 0x100u
/* ... and the DSDT offers no _S3: suspend to RAM switched off, as
 * libvirt asks with -global PIIX4_PM.disable_s3=1 (ICH9-LPC on q35). */
#define ACPI_NO_S3 0x200u
int acpi_build_dmar(uint8_t *buf, size_t len, uint32_t gpa, unsigned ncpus, const uint8_t *apic_ids,
		    uint16_t pvpanic_port, unsigned dmar);
/* The same tables for firmware (SeaBIOS) boots, as QEMU hands them over
 * through fw_cfg: ACPI_FW_TABLES_FILE holds every table but the RSDP with
 * pointers as offsets into that file and checksums left 0,
 * ACPI_FW_RSDP_FILE the RSDP, and ACPI_FW_LOADER_FILE the table-loader
 * commands (ACPI_LOADER_CMD_LEN bytes each, little endian) with which the
 * firmware allocates both, adds the tables' address to each pointer and
 * computes the checksums. 0, or -ENOSPC / -EINVAL. */
#define ACPI_FW_LOADER_FILE "etc/table-loader"
#define ACPI_FW_TABLES_FILE "etc/acpi/tables"
#define ACPI_FW_RSDP_FILE "etc/acpi/rsdp"
#define ACPI_LOADER_CMD_LEN 128
#define ACPI_LOADER_FILESZ 56 /* a file name field, NUL padded */
/* Command types (the first 4 bytes) and their fields after the type:
 * ALLOCATE: file, u32 align, u8 zone; ADD_POINTER: file holding the
 * pointer, file pointed to, u32 offset, u8 size; ADD_CHECKSUM: file,
 * u32 checksum offset, u32 start, u32 length. */
#define ACPI_LOADER_ALLOCATE 1u
#define ACPI_LOADER_ADD_POINTER 2u
#define ACPI_LOADER_ADD_CHECKSUM 3u
#define ACPI_LOADER_ZONE_HIGH 1u
#define ACPI_LOADER_ZONE_FSEG 2u
struct acpi_fw_blobs {
	uint8_t rsdp[36];
	uint8_t tables[FW_TABLES_SIZE];
	uint8_t loader[64 * ACPI_LOADER_CMD_LEN];
	size_t tables_len, loader_len;
};
int acpi_build_fw_cfg(struct acpi_fw_blobs *out, unsigned ncpus, const uint8_t *apic_ids,
		      uint16_t pvpanic_port, unsigned dmar);
/* Direct boot has no BIOS to program the PIIX3's PIRQ routing: the
 * machine sets PIRQA-D to pc_pirq_gsi[] (SeaBIOS's choice) and the DSDT's
 * _PRT says where each pin of each PCI slot arrives. */
extern const uint8_t pc_pirq_gsi[4];
/* firmware/pci_setup.c: SeaBIOS's PCI set-up for multiboot kernels: BARs
 * placed in the PCI hole (memory below FW_IOAPIC_GPA, I/O from 0xc000),
 * decoding on, INTERRUPT_LINE = the pin's GSI through pc_pirq_gsi. */
void fw_pci_setup(struct pci_bus *bus, bool q35);
/* The GSI pin (0 = INTA) of a slot reaches through pc_pirq_gsi. */
unsigned pc_pci_pin_gsi(unsigned slot, unsigned pin);
/* Both of the above into guest RAM at FW_TABLES_GPA (ACPI first, then MP),
 * and the EBDA pointer at 0x40e, for req's guest (RAM, vCPUs, pvpanic).
 * Call once per -kernel boot; 0 or -errno with a one-line reason in err.
 * *rsdp gets the RSDP address; with req->no_acpi (-no-acpi) only the MP
 * table is written and *rsdp is 0. */
/* The OS waking vector the guest wrote into the FACS of the tables
 * fw_tables_build made (ACPI S3 resume); 0 when none. */
uint32_t fw_acpi_waking_vector(const struct guest_mem *mem);
int fw_tables_build(const struct boot_request *req, uint64_t *rsdp, char *err, size_t errlen);
/* Copy src to dst with [FW_TABLES_GPA, +FW_TABLES_SIZE) marked reserved
 * (splitting RAM entries as needed). 0 or -ENOSPC. */
int fw_e820_with_tables(const struct e820_map *src, struct e820_map *dst);

/* Helpers the Linux and PVH loaders share (direct_boot.c). */
#define FW_BOOT_GDT_GPA 0x500u	/* flat GDT: 0x08 code32, 0x10 code64, 0x18 data */
#define FW_CMDLINE_GPA 0x20000u
#define FW_CMDLINE_MAX 0x10000u
/* Write the flat boot GDT and point cpu->gdt_base/limit at it. */
int fw_write_boot_gdt(struct guest_mem *mem, struct boot_cpu_state *cpu);
/* Copy cmdline (NUL included) to FW_CMDLINE_GPA; -E2BIG over max bytes. */
int fw_write_cmdline(const struct boot_request *req, size_t max, char *err, size_t errlen);
/* Read req->initrd_path straight into guest RAM: page aligned, as high as
 * possible below min(limit, end of RAM below 4 GiB) and at or above floor.
 * No initrd: 0 with *gpa = *size = 0. Else 0 or -errno with err set. */
int fw_load_initrd(const struct boot_request *req, const struct e820_map *e820, uint64_t floor,
		   uint64_t limit, uint64_t *gpa, uint64_t *size, char *err, size_t errlen);
/* Copy the PT_LOAD segments of the ELF64 image f to their physical
 * addresses (bss zeroed); *end = end of the highest. 0 or -errno, err set. */
int fw_elf_load_segments(const struct boot_request *req, const uint8_t *f, size_t size,
			 uint64_t *end, char *err, size_t errlen);
/* The highest end of a RAM e820 entry below 4 GiB: the first usable
 * stretch is [1 MiB, this). */
uint64_t fw_low_ram_end(const struct e820_map *e820);

/* Linux boot protocol >= 2.06, relocatable bzImage, 64-bit entry. */
int linux_load(const struct boot_request *req, struct boot_cpu_state *cpu, char *err,
	       size_t errlen);
/* PVH: ELF vmlinux with XEN_ELFNOTE_PHYS32_ENTRY, hvm_start_info in ebx. */
int pvh_load(const struct boot_request *req, struct boot_cpu_state *cpu, char *err,
	     size_t errlen);

/* --------------------------------------------- SeaBIOS and fw_cfg content */

/* The BIOS image, page-aligned host memory the machine maps read-only. */
struct bios_image {
	uint8_t *data;
	size_t size;
};

/* Load path, or SEABIOS_DEFAULT_PATH when NULL. The size must be a
 * multiple of 64 KiB and at most 16 MiB. 0, or -errno and a one-line
 * reason in err. */
int bios_load(const char *path, struct bios_image *img, char *err, size_t errlen);
void bios_free(struct bios_image *img);
/* Map the image read-only at 4 GiB - size and show its last 128 KiB (or
 * all of it, when smaller) below 1 MiB: through the i440FX's PAM ROM
 * alias when nb is given, else directly. The boot CPU then starts at the
 * reset vector (BOOT_MODE_RESET). */
int bios_map(const struct bios_image *img, const struct pc_mem_map *map, struct i440fx *nb,
	     char *err, size_t errlen);

/* What SeaBIOS is told about the machine through fw_cfg and CMOS. */
struct pc_fw_config {
	uint64_t ram_size;	  /* -m */
	unsigned ncpus;
	const uint8_t *apic_ids;     /* ncpus ascending APIC IDs; NULL: 0..n-1 */
	const struct e820_map *e820; /* RAM entries become etc/e820 */
	const char *boot_order;	  /* -boot order=: letters c, d, n; NULL = "cdn" */
	/* Devices with a bootindex, in that order: "path\n" lines put before
	 * the -boot order ones in `bootorder`; NULL for none. */
	const char *bootindex_paths;
	bool boot_menu;		  /* -boot menu=on */
	bool boot_strict;	  /* -boot strict=on: HALT ends bootorder */
	const uint8_t *uuid;	  /* -uuid (16 bytes, RFC 4122 order); NULL: zero */
	bool nographic;
	/* ACPI tables for SeaBIOS to install (acpi_build_fw_cfg); acpi
	 * false (-no-acpi): none, SeaBIOS then boots without ACPI. */
	bool acpi;
	uint16_t pvpanic_port; /* as in struct boot_request */
	unsigned dmar;
	bool q35;		  /* as in struct boot_request */
	bool no_s3;		  /* as in struct boot_request */
	unsigned cdrom_slot;	  /* 1 + IDE index of the CD-ROM 'd' names; 0: secondary master */
};

/* Validate a -boot order= value: 0, or -EINVAL with the reason in err. */
int boot_order_check(const char *order, char *err, size_t errlen);
/* The `bootorder` file: one device path per line for the letters that
 * name a device SeaBIOS can find (c: the first IDE drive, d: the CD-ROM at
 * IDE index cdrom, QEMU's secondary master by default; on q35 the IDE
 * index is the ich9-ahci's port). Returns the length written (snprintf
 * style). */
size_t boot_order_paths(const char *order, unsigned cdrom, bool q35, char *buf, size_t len);
/* SeaBIOS's device paths, as its bootorder lines name drives (snprintf
 * style): the drive at IDE index (channel * 2 + unit) of PIIX3's IDE at
 * 00:01.1, or on q35 at that port of the ich9-ahci at 00:1f.2; the drive
 * on a port of the AHCI controller at devfn; the virtio-blk disk at devfn
 * of the root bus (bridge < 0) or of the bus behind the root port at
 * devfn bridge. */
int fw_ide_drive_path(char *buf, size_t len, bool q35, unsigned index);
int fw_ahci_drive_path(char *buf, size_t len, uint8_t devfn, unsigned port);
int fw_virtio_disk_path(char *buf, size_t len, int bridge, uint8_t devfn);
/* Fill fw_cfg for SeaBIOS (signature/ID come from the device). The order
 * must have passed boot_order_check. */
int pc_fw_cfg_setup(struct fw_cfg *f, const struct pc_fw_config *c, char *err, size_t errlen);
/* The CMOS bytes SeaBIOS reads: memory sizes, CPU count, boot order. */
void pc_cmos_setup(struct rtc *rtc, const struct pc_fw_config *c);
/* RAM below and above 4 GiB from the e820 map (or ram_size without one). */
void pc_ram_split(const struct pc_fw_config *c, uint64_t *below, uint64_t *above);
/* SMBIOS structures for the machine (SeaBIOS adds type 0) into tables,
 * and the 2.1-style entry point SeaBIOS completes: QEMU's
 * etc/smbios/smbios-tables and -anchor. 0, or -ENOSPC when max is short. */
#define SMBIOS_ANCHOR_LEN 31
int smbios_build(const struct pc_fw_config *c, uint8_t anchor[SMBIOS_ANCHOR_LEN],
		 uint8_t *tables, size_t max, size_t *tables_len);

#endif /* VMM_FIRMWARE_H */
