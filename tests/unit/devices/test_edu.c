/* Unit tests for QEMU's edu device: identification, liveness,
 * factorial, interrupts (INTA and MSI), DMA to and from its buffer, and
 * DMA through the VT-d model. No KVM. */
#include <check.h>

#include "devices/dev_host.h"
#include "devices/iommu/intel_iommu.h"
#include "devices/pci/pci.h"
#include "devices/testdev/edu.h"
#include "tests/unit/devices/pc_host.h"

#define BAR 0xfeb00000u
#define DEVFN 0x10u /* 00:02.0 */
#define GSI 11u

static struct fake_host t;
static struct pci_bus *pci;
static struct edu *e;
static uint64_t last_msi_addr;
static uint32_t last_msi_data;
static unsigned n_msi;

static void record_msi(void *opaque, uint64_t addr, uint32_t data)
{
	last_msi_addr = addr;
	last_msi_data = data;
	n_msi++;
}

static int route(void *opaque, unsigned slot, unsigned pin)
{
	return GSI;
}

static uint64_t rd(unsigned off, unsigned size)
{
	uint64_t v = 0;

	iobus_read(t.host.mmio, BAR + off, &v, size);
	return v;
}

static void wr(unsigned off, unsigned size, uint64_t v)
{
	iobus_write(t.host.mmio, BAR + off, &v, size);
}

static void setup(void)
{
	test_host_init(&t);
	t.host.irq.msi = record_msi;
	n_msi = 0;
	pci = pci_bus_new(&t.host);
	ck_assert_ptr_nonnull(pci);
	pci_bus_set_route(pci, route, NULL);
	e = edu_new(&t.host, pci, DEVFN);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(edu_pci(e)->devfn, DEVFN);
	pci_cfg_write(pci, DEVFN, 0x10, 4, BAR);
	pci_cfg_write(pci, DEVFN, 0x04, 2, 0x6); /* memory, bus master */
}

static void teardown(void)
{
	edu_free(e);
	pci_bus_free(pci);
	test_host_fini(&t);
}

START_TEST(identity_liveness_factorial)
{
	ck_assert_uint_eq(pci_cfg_read(pci, DEVFN, 0, 4), 0x11e81234);
	/* as kvm-unit-tests read the device ID: 0xcf8's low bits pick the word */
	pio_out(&t, 0xcf8, 4, 0x80000000u | DEVFN << 8 | 2);
	ck_assert_uint_eq(pio_in(&t, 0xcfc, 2), 0x11e8);
	ck_assert_uint_eq(rd(0x00, 4), 0x010000ed);
	wr(0x04, 4, 0x12345678);
	ck_assert_uint_eq(rd(0x04, 4), 0xedcba987);
	wr(0x08, 4, 5);
	ck_assert_uint_eq(rd(0x08, 4), 120);
	ck_assert_uint_eq(rd(0x20, 4) & 1, 0); /* done */
	wr(0x08, 4, 12);
	ck_assert_uint_eq(rd(0x08, 4), 479001600);
	/* wraps as QEMU's 32-bit loop: 33! mod 2^32 = 2^31, then 0 */
	wr(0x08, 4, 33);
	ck_assert_uint_eq(rd(0x08, 4), 0x80000000u);
	wr(0x08, 4, 34);
	ck_assert_uint_eq(rd(0x08, 4), 0);
	wr(0x08, 4, 0xffffffffu); /* a loop to 0xffffffff never ended */
	ck_assert_uint_eq(rd(0x08, 4), 0);
	/* 32-bit registers refuse other sizes */
	ck_assert_uint_eq(rd(0x00, 2), 0xffff);
}
END_TEST

START_TEST(interrupts_intx_and_msi)
{
	unsigned msi = 0x40;

	wr(0x60, 4, 0x4);
	ck_assert_uint_eq(rd(0x24, 4), 0x4);
	ck_assert(t.level[GSI]);
	wr(0x64, 4, 0x4);
	ck_assert_uint_eq(rd(0x24, 4), 0);
	ck_assert(!t.level[GSI]);
	/* factorial with the interrupt bit: status 1 */
	wr(0x20, 4, 0x80);
	wr(0x08, 4, 3);
	ck_assert_uint_eq(rd(0x24, 4), 1);
	ck_assert(t.level[GSI]);
	wr(0x64, 4, 1);
	/* MSI (the capability at 0x40): no INTA, one message per raise */
	ck_assert_uint_eq(pci_cfg_read(pci, DEVFN, 0x34, 1), msi);
	ck_assert_uint_eq(pci_cfg_read(pci, DEVFN, msi, 1), 0x05);
	pci_cfg_write(pci, DEVFN, msi + 4, 4, 0xfee01000);
	pci_cfg_write(pci, DEVFN, msi + 12, 2, 0x0031);
	pci_cfg_write(pci, DEVFN, msi + 2, 2, 1);
	wr(0x60, 4, 0x10);
	ck_assert_uint_eq(n_msi, 1);
	ck_assert_uint_eq(last_msi_addr, 0xfee01000);
	ck_assert_uint_eq(last_msi_data, 0x31);
	ck_assert(!t.level[GSI]);
}
END_TEST

static void dma(uint64_t src, uint64_t dst, uint64_t count, uint32_t cmd)
{
	wr(0x80, 8, src);
	wr(0x88, 8, dst);
	wr(0x90, 8, count);
	wr(0x98, 4, cmd);
	ck_assert_uint_eq(rd(0x98, 4) & 1, 0); /* finished */
}

START_TEST(dma_to_and_from_the_buffer)
{
	memcpy(t.ram + 0x5000, "hello edu", 10);
	dma(0x5000, EDU_DMA_BASE + 16, 10, 1);	   /* RAM -> device */
	dma(EDU_DMA_BASE + 16, 0x6000, 10, 3 | 4); /* device -> RAM, interrupt */
	ck_assert_str_eq((char *)t.ram + 0x6000, "hello edu");
	ck_assert_uint_eq(rd(0x24, 4), 0x100);
	/* outside the buffer: dropped, RAM untouched */
	dma(EDU_DMA_BASE + 4090, 0x7000, 10, 3);
	ck_assert_uint_eq(t.ram[0x7000], 0);
	/* bus mastering off: nothing moves */
	pci_cfg_write(pci, DEVFN, 0x04, 2, 0x2);
	dma(EDU_DMA_BASE + 16, 0x8000, 10, 3);
	ck_assert_uint_eq(t.ram[0x8000], 0);
}
END_TEST

/* With VT-d translating: IOVA 0 -> RAM 0x9000; IOVA 0x1000 unmapped. */
START_TEST(dma_through_the_iommu)
{
	struct intel_iommu_opts o = {false, false};
	struct intel_iommu *v = intel_iommu_new(&t.host, pci, &o);
	uint64_t val, len;

	ck_assert_ptr_nonnull(v);
	val = 0x11000 | 1;
	memcpy(t.ram + 0x10000 + 0 * 16, &val, 8); /* root: bus 0 */
	val = 0x12000 | 1;
	memcpy(t.ram + 0x11000 + DEVFN * 16, &val, 8); /* context */
	val = 1;
	memcpy(t.ram + 0x11000 + DEVFN * 16 + 8, &val, 8); /* AW 39 */
	val = 0x13000 | 3;
	memcpy(t.ram + 0x12000, &val, 8);
	val = 0x14000 | 3;
	memcpy(t.ram + 0x13000, &val, 8);
	val = 0x9000 | 3;
	memcpy(t.ram + 0x14000, &val, 8);
	val = 0x10000;
	iobus_write(t.host.mmio, INTEL_IOMMU_BASE + 0x20, &val, 8);
	val = 1u << 30;
	iobus_write(t.host.mmio, INTEL_IOMMU_BASE + 0x18, &val, 4);
	val = 1u << 31 | 1u << 30;
	iobus_write(t.host.mmio, INTEL_IOMMU_BASE + 0x18, &val, 4);

	memcpy(t.ram + 0x9000, "remapped", 9);
	dma(0x0, EDU_DMA_BASE, 9, 1);
	dma(EDU_DMA_BASE, 0x100, 9, 3);
	ck_assert_str_eq((char *)t.ram + 0x9100, "remapped");
	ck_assert_uint_eq(t.ram[0x100], 0); /* not at the untranslated address */
	dma(EDU_DMA_BASE, 0x1000, 9, 3);    /* unmapped: a fault, no write */
	ck_assert_uint_eq(t.ram[0x1000], 0);
	val = 0;
	iobus_read(t.host.mmio, INTEL_IOMMU_BASE + 0x34, &val, 4);
	ck_assert(val & 2);
	/* in-place bus mastering (IDE's PRDs and buffers) translates too */
	len = 0x2000;
	ck_assert_ptr_eq(pci_dma_ptr(edu_pci(e), 0x10, &len, true), t.ram + 0x9010);
	ck_assert_uint_eq(len, 0x1000 - 0x10);
	len = 16;
	ck_assert_ptr_null(pci_dma_ptr(edu_pci(e), 0x1000, &len, false));
	intel_iommu_free(v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("edu");
	TCase *tc = tcase_create("edu");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, identity_liveness_factorial);
	tcase_add_test(tc, interrupts_intx_and_msi);
	tcase_add_test(tc, dma_to_and_from_the_buffer);
	tcase_add_test(tc, dma_through_the_iommu);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
