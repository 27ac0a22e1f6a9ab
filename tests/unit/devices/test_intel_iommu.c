/* Unit tests for the VT-d model: the GCMD -> GSTS handshake,
 * queued invalidation, DMA remapping through tables built in fake guest
 * RAM (3 levels, a 2 MiB page, faults) and interrupt remapping of MSIs and
 * I/O APIC entries, and the unit's snapshot. No KVM. */
#include <check.h>

#include "devices/dev_host.h"
#include "devices/intc/ioapic.h"
#include "devices/iommu/intel_iommu.h"
#include "devices/pci/pci.h"
#include "tests/unit/devices/pc_host.h"
#include "tests/unit/devices/state_tree.h"

#define R(off) (INTEL_IOMMU_BASE + (off))
#define GCMD 0x18
#define GSTS 0x1c
#define RTADDR 0x20
#define FSTS 0x34
#define IQH 0x80
#define IQT 0x88
#define IQA 0x90
#define ICS 0x9c
#define IECTL 0xa0
#define IEDATA 0xa4
#define IEADDR 0xa8
#define IRTA 0xb8
#define FRCD 0x220
#define TE (1u << 31)
#define SRTP (1u << 30)
#define QIE (1u << 26)
#define IRE (1u << 25)
#define SIRTP (1u << 24)

/* Guest RAM layout of the tests (2 MiB at 0). */
#define ROOT 0x10000u
#define CTX 0x11000u
#define L3 0x12000u
#define L2 0x13000u
#define L1 0x14000u
#define QUEUE 0x20000u
#define IRT 0x30000u
#define STATUS 0x40000u
#define SID 0x0010u /* 00:02.0 */

static struct fake_host t;
static struct intel_iommu *v;
static uint64_t msi_addr[8];
static uint32_t msi_data[8];
static unsigned n_msi;

static void record_msi(void *opaque, uint64_t addr, uint32_t data)
{
	if (n_msi < 8) {
		msi_addr[n_msi] = addr;
		msi_data[n_msi] = data;
	}
	n_msi++;
}

static uint64_t rd(unsigned off, unsigned size)
{
	uint64_t val = 0;

	iobus_read(t.host.mmio, R(off), &val, size);
	return val;
}

static void wr(unsigned off, unsigned size, uint64_t val)
{
	iobus_write(t.host.mmio, R(off), &val, size);
}

static void put64(uint64_t gpa, uint64_t val)
{
	memcpy(t.ram + gpa, &val, 8);
}

static void start(bool intremap)
{
	struct intel_iommu_opts o = {intremap, false};

	test_host_init(&t);
	t.host.irq.msi = record_msi;
	n_msi = 0;
	v = intel_iommu_new(&t.host, NULL, &o);
	ck_assert_ptr_nonnull(v);
}

static void setup(void)
{
	start(true);
}

static void teardown(void)
{
	intel_iommu_free(v);
	test_host_fini(&t);
}

/* kvm-unit-tests' vtd_gcmd_or: write GSTS | bit, wait for GSTS to show it */
static void gcmd_or(uint32_t bit)
{
	wr(GCMD, 4, (rd(GSTS, 4) & ~0u) | bit);
}

START_TEST(identity_and_handshake)
{
	uint64_t cap = rd(0x08, 8), ecap = rd(0x10, 8);

	ck_assert_uint_eq(rd(0x00, 4), 0x10);
	ck_assert(cap & (2ull << 8));	       /* SAGAW 39-bit */
	ck_assert_uint_eq((cap >> 34) & 3, 3); /* SLLPS 2M, 1G */
	ck_assert(ecap & 2);		       /* QI */
	ck_assert(ecap & 8);		       /* IR */
	ck_assert(!(ecap & 16));	       /* EIM off */
	ck_assert_uint_eq(rd(GSTS, 4), 0);
	wr(RTADDR, 8, ROOT);
	gcmd_or(SRTP);
	ck_assert_uint_eq(rd(GSTS, 4), SRTP);
	ck_assert_uint_eq(rd(RTADDR, 8), ROOT);
	gcmd_or(QIE);
	gcmd_or(TE);
	ck_assert_uint_eq(rd(GSTS, 4), SRTP | QIE | TE);
	wr(IRTA, 8, IRT | 0xf);
	gcmd_or(SIRTP);
	gcmd_or(IRE);
	ck_assert_uint_eq(rd(GSTS, 4), SRTP | QIE | TE | SIRTP | IRE);
	/* turning translation off clears TES only */
	wr(GCMD, 4, rd(GSTS, 4) & ~TE);
	ck_assert_uint_eq(rd(GSTS, 4), SRTP | QIE | SIRTP | IRE);
	ck_assert_uint_eq(rd(FSTS, 4), 0);
}
END_TEST

/* An invalidation wait with status write and interrupt, then a bad
 * descriptor: IQE, and the head stays on it. */
START_TEST(queued_invalidation_wait)
{
	wr(IQA, 8, QUEUE); /* one page: 256 descriptors */
	gcmd_or(QIE);
	ck_assert_uint_eq(rd(IQH, 8), 0);
	wr(IEDATA, 4, 0x4242);
	wr(IEADDR, 4, 0xfee00000);
	wr(IECTL, 4, 0);					    /* unmask */
	put64(QUEUE, 2 | 0);					    /* IOTLB global */
	put64(QUEUE + 16, 5 | 1u << 5 | 1u << 4 | 0xabcdull << 32); /* wait: SW, IF */
	put64(QUEUE + 24, STATUS);
	wr(IQT, 8, 32);
	ck_assert_uint_eq(rd(IQH, 8), 32);
	ck_assert_uint_eq(*(uint32_t *)(t.ram + STATUS), 0xabcd);
	ck_assert_uint_eq(rd(ICS, 4), 1);
	ck_assert_uint_eq(n_msi, 1);
	ck_assert_uint_eq(msi_addr[0], 0xfee00000);
	ck_assert_uint_eq(msi_data[0], 0x4242);
	put64(QUEUE + 32, 0xf); /* no such type */
	wr(IQT, 8, 48);
	ck_assert(rd(FSTS, 4) & 0x10);
	ck_assert_uint_eq(rd(IQH, 8), 32);
	/* a queue tail past the queue is an error too, not a wild read */
	wr(FSTS, 4, 0x10);
	wr(IQT, 8, 0x7fff0);
	ck_assert(rd(FSTS, 4) & 0x10);
}
END_TEST

/* root -> context (3-level, 39-bit) -> L3 -> L2 -> L1 */
static void build_tables(bool fpd)
{
	put64(ROOT + (SID >> 8) * 16, CTX | 1);
	put64(CTX + (SID & 0xff) * 16, L3 | 1 | (fpd ? 2 : 0));
	put64(CTX + (SID & 0xff) * 16 + 8, 1 | 7u << 8); /* AW 39, domain 7 */
	put64(L3, L2 | 3);
	put64(L2, L1 | 3);			 /* iova [0, 2M) */
	put64(L2 + 8, 0x40000000 | 3 | 1u << 7); /* iova [2M, 4M): 2 MiB page */
	put64(L1 + 1 * 8, 0x80000 | 3);		 /* iova 0x1000 RW */
	put64(L1 + 3 * 8, 0x81000 | 1);		 /* iova 0x3000 read-only */
	wr(RTADDR, 8, ROOT);
	gcmd_or(SRTP);
	gcmd_or(TE);
}

START_TEST(dma_translation_and_faults)
{
	uint64_t gpa, len = 0x10000;

	/* translation off: pass-through */
	ck_assert_int_eq(intel_iommu_translate(v, SID, 0x1234, false, &gpa, &len), 0);
	ck_assert_uint_eq(gpa, 0x1234);
	build_tables(false);
	len = 0x10000;
	ck_assert_int_eq(intel_iommu_translate(v, SID, 0x1234, true, &gpa, &len), 0);
	ck_assert_uint_eq(gpa, 0x80234);
	ck_assert_uint_eq(len, 0x1000 - 0x234); /* to the end of the page */
	/* the 2 MiB page */
	len = 0x400000;
	ck_assert_int_eq(intel_iommu_translate(v, SID, 0x2abcde, false, &gpa, &len), 0);
	ck_assert_uint_eq(gpa, 0x400abcde);
	ck_assert_uint_eq(len, 0x200000 - 0xabcde);
	ck_assert_uint_eq(rd(FSTS, 4), 0);
	/* not present: a read fault recorded with SID, reason 6, address */
	len = 8;
	ck_assert_int_eq(intel_iommu_translate(v, SID, 0x2010, false, &gpa, &len), -EFAULT);
	ck_assert(rd(FSTS, 4) & 2); /* PPF */
	ck_assert_uint_eq(rd(FRCD, 8), 0x2000);
	ck_assert_uint_eq(rd(FRCD + 8, 8) & 0xffff, SID);
	ck_assert_uint_eq((rd(FRCD + 8, 8) >> 32) & 0xff, 6);
	ck_assert(rd(FRCD + 8, 8) >> 63);
	/* a second fault while the record is unread: overflow */
	ck_assert_int_eq(intel_iommu_translate(v, SID, 0x3000, true, &gpa, &len), -EFAULT);
	ck_assert(rd(FSTS, 4) & 1); /* PFO */
	/* clear F: the record is free again, PPF drops */
	wr(FRCD + 12, 4, 1u << 31);
	wr(FSTS, 4, 1);
	ck_assert_uint_eq(rd(FSTS, 4), 0);
	/* the fault event: held while masked (IP), sent on unmasking, and
	 * sent at once for the next fault */
	ck_assert_uint_eq(rd(0x38, 4), 0xc0000000u); /* IM | IP */
	n_msi = 0;
	wr(0x3c, 4, 0x55);
	wr(0x40, 4, 0xfee00000);
	wr(0x38, 4, 0);
	ck_assert_uint_eq(n_msi, 1);
	ck_assert_uint_eq(msi_data[0], 0x55);
	ck_assert_uint_eq(rd(0x38, 4), 0);
	/* a write to a read-only page: reason 5 */
	ck_assert_int_eq(intel_iommu_translate(v, SID, 0x3000, true, &gpa, &len), -EFAULT);
	ck_assert_uint_eq((rd(FRCD + 8, 8) >> 32) & 0xff, 5);
	ck_assert_uint_eq(n_msi, 2); /* its fault event */
	/* register-based invalidation completes at once: ICC and IVT clear */
	wr(0x28, 8, 1ull << 63 | 1ull << 61);
	ck_assert_uint_eq(rd(0x28, 8) >> 63, 0);
	ck_assert_uint_eq((rd(0x28, 8) >> 59) & 3, 1); /* CAIG: global */
	wr(0xf8, 8, 1ull << 63 | 1ull << 60);
	ck_assert_uint_eq(rd(0xf8, 8) >> 63, 0);
	ck_assert_uint_eq((rd(0xf8, 8) >> 57) & 3, 1); /* IAIG: global */
	/* another requester has no context entry: reason 2 */
	wr(FRCD + 12, 4, 1u << 31);
	ck_assert_int_eq(intel_iommu_translate(v, 0x18, 0x1000, false, &gpa, &len), -EFAULT);
	ck_assert_uint_eq((rd(FRCD + 8, 8) >> 32) & 0xff, 2);
	/* above the 39-bit width: reason 4 */
	wr(FRCD + 12, 4, 1u << 31);
	ck_assert_int_eq(intel_iommu_translate(v, SID, 1ull << 40, false, &gpa, &len), -EFAULT);
	ck_assert_uint_eq((rd(FRCD + 8, 8) >> 32) & 0xff, 4);
}
END_TEST

/* Hostile tables: a root table outside RAM, a page table pointer to
 * nowhere, fault processing disabled. */
START_TEST(dma_bad_tables_are_faults)
{
	uint64_t gpa, len = 8;

	build_tables(true);
	ck_assert_int_eq(intel_iommu_translate(v, SID, 0x5000, false, &gpa, &len), -EFAULT);
	ck_assert_uint_eq(rd(FSTS, 4), 0);  /* FPD: nothing recorded */
	put64(L2 + 16, 0xfff000000ull | 3); /* iova [4M, 6M): table outside RAM */
	ck_assert_int_eq(intel_iommu_translate(v, SID, 0x400000, false, &gpa, &len), -EFAULT);
	wr(RTADDR, 8, 0x7ffffff000ull);
	gcmd_or(SRTP);
	ck_assert_int_eq(intel_iommu_translate(v, SID, 0x1000, false, &gpa, &len), -EFAULT);
	ck_assert_uint_eq((rd(FRCD + 8, 8) >> 32) & 0xff, 8); /* root table access */
}
END_TEST

static void irte(unsigned index, uint8_t vector, uint32_t dest, uint16_t sid, unsigned svt)
{
	put64(IRT + index * 16, 1 | (uint64_t)vector << 16 | (uint64_t)dest << 32);
	put64(IRT + index * 16 + 8, sid | (uint64_t)svt << 18);
}

static void enable_ir(void)
{
	wr(IRTA, 8, IRT | 7); /* 256 entries */
	gcmd_or(SIRTP);
	gcmd_or(IRE);
}

START_TEST(interrupt_remapping_msi)
{
	uint64_t addr = 0xfee00000u | 5u << 5 | 1u << 4;
	uint32_t data = 0;

	irte(5, 0x41, 3u << 8, SID, 1); /* xAPIC destination 3 in DST[15:8] */
	/* remapping off: the message passes as is */
	ck_assert_int_eq(intel_iommu_remap_msi(v, SID, &addr, &data, true), 0);
	ck_assert_uint_eq(addr, 0xfee00000u | 5u << 5 | 1u << 4);
	enable_ir();
	ck_assert_int_eq(intel_iommu_remap_msi(v, SID, &addr, &data, true), 0);
	ck_assert_uint_eq(addr, 0xfee03000u);
	ck_assert_uint_eq(data, 0x41);
	/* another requester: source-id check fails (0x26) */
	addr = 0xfee00000u | 5u << 5 | 1u << 4;
	ck_assert_int_eq(intel_iommu_remap_msi(v, 0x18, &addr, &data, true), -EINVAL);
	ck_assert_uint_eq((rd(FRCD + 8, 8) >> 32) & 0xff, 0x26);
	ck_assert_uint_eq(rd(FRCD, 8) >> 48, 5); /* the interrupt index */
	wr(FRCD + 12, 4, 1u << 31);
	/* not present (0x22), index past the table (0x21), compatibility (0x25) */
	addr = 0xfee00000u | 6u << 5 | 1u << 4;
	ck_assert_int_eq(intel_iommu_remap_msi(v, SID, &addr, &data, true), -EINVAL);
	ck_assert_uint_eq((rd(FRCD + 8, 8) >> 32) & 0xff, 0x22);
	wr(FRCD + 12, 4, 1u << 31);
	addr = 0xfee00000u | 300u << 5 | 1u << 4;
	ck_assert_int_eq(intel_iommu_remap_msi(v, SID, &addr, &data, true), -EINVAL);
	ck_assert_uint_eq((rd(FRCD + 8, 8) >> 32) & 0xff, 0x21);
	wr(FRCD + 12, 4, 1u << 31);
	addr = 0xfee01000u;
	ck_assert_int_eq(intel_iommu_remap_msi(v, SID, &addr, &data, true), -EINVAL);
	ck_assert_uint_eq((rd(FRCD + 8, 8) >> 32) & 0xff, 0x25);
	/* the machine's MSI path (host->irq.msi) is remapped too */
	n_msi = 0;
	t.host.irq.msi(t.host.irq.opaque, 0xfee00000u | 5u << 5 | 1u << 4, 0);
	ck_assert_uint_eq(n_msi, 1);
	ck_assert_uint_eq(msi_data[0], 0x41);
}
END_TEST

/* A remappable-format I/O APIC entry: the I/O APIC sends handle 9, the
 * IRTE says level-triggered vector 0x52 to APIC 1. Its source ID is not
 * checked (as QEMU: kvm-unit-tests put the edu's there). */
START_TEST(interrupt_remapping_ioapic_rte)
{
	uint64_t rte = 0x52 | 1ull << 15 | 1ull << 48 | 9ull << 49, addr;
	uint32_t data;

	put64(IRT + 9 * 16, 1 | 1u << 4 | 0x52ull << 16 | (1ull << 8) << 32);
	put64(IRT + 9 * 16 + 8, SID | 1ull << 18);
	enable_ir();
	ioapic_rte_to_msi(rte, &addr, &data);
	ck_assert_uint_eq(addr, 0xfee00000u | 9u << 5 | 1u << 4);
	ck_assert_int_eq(intel_iommu_remap_msi(v, PCI_SID_UNKNOWN, &addr, &data, true), 0);
	ck_assert_uint_eq(addr, 0xfee01000u);
	ck_assert_uint_eq(data, 0x52 | 1u << 15 | 1u << 14);
}
END_TEST

START_TEST(no_intremap_no_ir)
{
	uint64_t addr = 0xfee00000u | 5u << 5 | 1u << 4;
	uint32_t data = 0;

	teardown();
	start(false);
	ck_assert(!(rd(0x10, 8) & 8));
	irte(5, 0x41, 0, SID, 0);
	wr(IRTA, 8, IRT | 7);
	gcmd_or(SIRTP);
	gcmd_or(IRE);
	ck_assert_uint_eq(rd(GSTS, 4), 0); /* neither takes */
	ck_assert_int_eq(intel_iommu_remap_msi(v, SID, &addr, &data, true), 0);
	ck_assert_uint_eq(data, 0);
}
END_TEST

/* irqfd routes (virtio): added remapped, remapped again on an interrupt
 * entry cache invalidation after the guest rewrote the IRTE. */
static uint64_t route_addr;
static uint32_t route_data;
static unsigned route_sets;

static int fake_route_add(void *opaque, uint64_t addr, uint32_t data)
{
	route_addr = addr;
	route_data = data;
	return 7;
}

static int fake_route_set(void *opaque, int route, uint64_t addr, uint32_t data)
{
	ck_assert_int_eq(route, 7);
	route_addr = addr;
	route_data = data;
	route_sets++;
	return 0;
}

START_TEST(msi_routes_follow_remapping)
{
	struct intel_iommu_opts o = {true, false};
	int id;

	intel_iommu_free(v);
	t.host.fast.msi_route_add = fake_route_add;
	t.host.fast.msi_route_set = fake_route_set;
	v = intel_iommu_new(&t.host, NULL, &o);
	ck_assert_ptr_nonnull(v);
	ck_assert_ptr_eq(t.host.fast.opaque, v);
	irte(5, 0x41, 0, SID, 0);
	enable_ir();
	id = t.host.fast.msi_route_add(t.host.fast.opaque, 0xfee00000u | 5u << 5 | 1u << 4, 0);
	ck_assert_int_eq(id, 7);
	ck_assert_uint_eq(route_addr, 0xfee00000u);
	ck_assert_uint_eq(route_data, 0x41);
	irte(5, 0x57, 2u << 8, SID, 0);
	wr(IQA, 8, QUEUE);
	gcmd_or(QIE);
	put64(QUEUE, 4); /* interrupt entry cache, global */
	route_sets = 0;
	wr(IQT, 8, 16);
	ck_assert_uint_ge(route_sets, 1);
	ck_assert_uint_eq(route_addr, 0xfee02000u);
	ck_assert_uint_eq(route_data, 0x57);
	intel_iommu_free(v);
	v = NULL;
	ck_assert_ptr_eq(t.host.fast.msi_route_add, fake_route_add); /* restored */
}
END_TEST

static void save_vtd(void *dev, struct state_writer *w)
{
	intel_iommu_save(dev, w);
}

static int load_vtd(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return intel_iommu_load(dev, r, e, elen);
}

/* A unit translating, remapping and part-way through its invalidation
 * queue comes back doing all three where it was; a unit with other
 * options, or a global status no guest could have set, is refused. */
START_TEST(snapshot_round_trip)
{
	struct intel_iommu_opts plain = {false, false}, o = {true, false};
	uint64_t gpa, len = 0x1000, addr = 0xfee00000u | 5u << 5 | 1u << 4;
	uint32_t data = 0;
	size_t blen;
	void *blob, *bad;

	build_tables(false);
	irte(5, 0x41, 3u << 8, SID, 1);
	enable_ir();
	wr(IQA, 8, QUEUE);
	gcmd_or(QIE);
	put64(QUEUE, 2); /* IOTLB global */
	wr(IQT, 8, 16);
	blob = save_tree(save_vtd, v, &blen);
	intel_iommu_free(v);
	v = intel_iommu_new(&t.host, NULL, &o);
	ck_assert_int_eq(load_tree(load_vtd, v, blob, blen), 0);
	ck_assert_uint_eq(rd(GSTS, 4), SRTP | TE | SIRTP | IRE | QIE);
	ck_assert_int_eq(intel_iommu_translate(v, SID, 0x1234, false, &gpa, &len), 0);
	ck_assert_uint_eq(gpa, 0x80234);
	ck_assert_int_eq(intel_iommu_remap_msi(v, SID, &addr, &data, true), 0);
	ck_assert_uint_eq(addr, 0xfee03000u);
	ck_assert_uint_eq(data, 0x41);
	/* the queue goes on from its head: a wait with a status write */
	put64(QUEUE + 16, 5 | 1u << 5 | 0x77ull << 32);
	put64(QUEUE + 24, STATUS);
	wr(IQT, 8, 32);
	ck_assert_uint_eq(rd(IQH, 8), 32);
	ck_assert_uint_eq(*(uint32_t *)(t.ram + STATUS), 0x77);
	bad = patched_copy(blob, blen, "/devices/intel-iommu", "gsts", SRTP | 1, 4);
	ck_assert_int_eq(load_tree(load_vtd, v, bad, blen), -1);
	ck_assert_ptr_nonnull(strstr(state_err, "impossible global status"));
	free(bad);
	intel_iommu_free(v);
	v = intel_iommu_new(&t.host, NULL, &plain);
	ck_assert_int_eq(load_tree(load_vtd, v, blob, blen), -1);
	ck_assert_ptr_nonnull(strstr(state_err, "saved with intremap=on,eim=off"));
	free(blob);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("intel_iommu");
	TCase *tc = tcase_create("vtd");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, identity_and_handshake);
	tcase_add_test(tc, queued_invalidation_wait);
	tcase_add_test(tc, dma_translation_and_faults);
	tcase_add_test(tc, dma_bad_tables_are_faults);
	tcase_add_test(tc, interrupt_remapping_msi);
	tcase_add_test(tc, interrupt_remapping_ioapic_rte);
	tcase_add_test(tc, no_intremap_no_ir);
	tcase_add_test(tc, msi_routes_follow_remapping);
	tcase_add_test(tc, snapshot_round_trip);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
