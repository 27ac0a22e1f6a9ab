/* Unit tests for the I/O APIC through IOREGSEL/IOWIN: identity and
 * version registers, the redirection table (writable bits), edge and
 * level delivery as MSI messages, masking, remote IRR and the EOI
 * broadcast by vector, the route-change callback and `info ioapic`. */
#include <check.h>

#include "devices/dev_host.h"
#include "devices/intc/ioapic.h"
#include "tests/unit/devices/pc_host.h"

#define MAX_MSGS 16

struct io_fixture {
	struct fake_host t;
	struct ioapic *io;
	uint64_t addr[MAX_MSGS];
	uint32_t data[MAX_MSGS];
	unsigned n_msgs, route_changes;
};

static void record_msi(void *opaque, uint64_t addr, uint32_t data)
{
	struct io_fixture *f = opaque;

	ck_assert_uint_lt(f->n_msgs, MAX_MSGS);
	f->addr[f->n_msgs] = addr;
	f->data[f->n_msgs++] = data;
}

static void on_routes(void *opaque)
{
	struct io_fixture *f = opaque;

	f->route_changes++;
}

static void io_init(struct io_fixture *f)
{
	memset(f, 0, sizeof(*f));
	test_host_init(&f->t);
	f->t.host.irq.msi = record_msi;
	f->t.host.irq.opaque = f;
	f->io = ioapic_new(&f->t.host, IOAPIC_BASE);
	ck_assert_ptr_nonnull(f->io);
	ioapic_set_routes_changed(f->io, on_routes, f);
}

static void io_fini(struct io_fixture *f)
{
	ioapic_free(f->io);
	test_host_fini(&f->t);
}

static uint32_t reg_read(struct io_fixture *f, uint8_t reg)
{
	uint32_t sel = reg, v = 0;

	iobus_write(f->t.host.mmio, IOAPIC_BASE, &sel, 4);
	iobus_read(f->t.host.mmio, IOAPIC_BASE + 0x10, &v, 4);
	return v;
}

static void reg_write(struct io_fixture *f, uint8_t reg, uint32_t v)
{
	uint32_t sel = reg;

	iobus_write(f->t.host.mmio, IOAPIC_BASE, &sel, 4);
	iobus_write(f->t.host.mmio, IOAPIC_BASE + 0x10, &v, 4);
}

static void set_rte(struct io_fixture *f, unsigned pin, uint64_t rte)
{
	reg_write(f, (uint8_t)(0x10 + 2 * pin + 1), (uint32_t)(rte >> 32));
	reg_write(f, (uint8_t)(0x10 + 2 * pin), (uint32_t)rte);
}

static uint64_t get_rte(struct io_fixture *f, unsigned pin)
{
	return (uint64_t)reg_read(f, (uint8_t)(0x11 + 2 * pin)) << 32 |
	       reg_read(f, (uint8_t)(0x10 + 2 * pin));
}

START_TEST(identity_and_table)
{
	struct io_fixture f;

	io_init(&f);
	ck_assert_uint_eq(reg_read(&f, 0x01), 0x00170011); /* 24 entries, 82093AA */
	reg_write(&f, 0x00, 0x0f000000);
	ck_assert_uint_eq(reg_read(&f, 0x00), 0x0f000000);
	ck_assert_uint_eq(reg_read(&f, 0x02), 0x0f000000);
	reg_write(&f, 0x01, 0); /* read-only */
	ck_assert_uint_eq(reg_read(&f, 0x01), 0x00170011);
	/* entries start masked; reserved, delivery status and remote IRR
	 * bits do not take writes */
	for (unsigned pin = 0; pin < IOAPIC_NUM_PINS; pin++)
		ck_assert_uint_eq(get_rte(&f, pin), 0x10000);
	set_rte(&f, 23, 0xffffffffffffffffull);
	ck_assert_uint_eq(get_rte(&f, 23), 0xffff00000001afffull);
	ck_assert_uint_eq(reg_read(&f, 0x10 + 48), 0xffffffff); /* past the table */
	ck_assert_uint_ge(f.route_changes, 2);
	io_fini(&f);
}
END_TEST

START_TEST(edge_delivery_and_mask)
{
	struct io_fixture f;
	uint64_t addr;
	uint32_t data;
	bool masked;

	io_init(&f);
	/* pin 4: vector 0x34, fixed, physical destination 3, edge */
	set_rte(&f, 4, 0x0300000000000034ull);
	ioapic_set_irq(f.io, 4, true);
	ck_assert_uint_eq(f.n_msgs, 1);
	ck_assert_uint_eq(f.addr[0], 0xfee03000);
	ck_assert_uint_eq(f.data[0], 0x34);
	/* held high: no new edge */
	ioapic_set_irq(f.io, 4, true);
	ck_assert_uint_eq(f.n_msgs, 1);
	ioapic_set_irq(f.io, 4, false);
	ioapic_set_irq(f.io, 4, true);
	ck_assert_uint_eq(f.n_msgs, 2);
	ioapic_set_irq(f.io, 4, false);
	/* masked: the edge is lost, unmasking does not replay it */
	set_rte(&f, 4, 0x0300000000010034ull);
	ioapic_set_irq(f.io, 4, true);
	ioapic_set_irq(f.io, 4, false);
	set_rte(&f, 4, 0x0300000000000034ull);
	ck_assert_uint_eq(f.n_msgs, 2);
	/* lowest priority, logical destination 0x0f, NMI delivery mode */
	set_rte(&f, 5, 0x0f00000000000941ull);
	ioapic_set_irq(f.io, 5, true);
	ck_assert_uint_eq(f.addr[2], 0xfee0f00cull);
	ck_assert_uint_eq(f.data[2], 0x141);
	set_rte(&f, 6, 0x0000000000000c00ull); /* NMI */
	ioapic_pin_msi(f.io, 6, &addr, &data, &masked);
	ck_assert_uint_eq(data, 0x400);
	ck_assert(!masked);
	ck_assert_uint_eq(ioapic_irq_count(f.io, 4), 3);
	io_fini(&f);
}
END_TEST

START_TEST(level_remote_irr_and_eoi)
{
	struct io_fixture f;

	io_init(&f);
	/* pin 10: vector 0x3a, level triggered, masked for now */
	set_rte(&f, 10, 0x000000000001803aull);
	ioapic_set_irq(f.io, 10, true);
	ck_assert_uint_eq(f.n_msgs, 0);
	/* unmasking an asserted level pin delivers it */
	set_rte(&f, 10, 0x000000000000803aull);
	ck_assert_uint_eq(f.n_msgs, 1);
	ck_assert_uint_eq(f.data[0], 0xc03a);			   /* trigger + assert bits */
	ck_assert_uint_eq(get_rte(&f, 10) & (1u << 14), 1u << 14); /* remote IRR */
	/* no second message until the EOI */
	ioapic_set_irq(f.io, 10, true);
	ck_assert_uint_eq(f.n_msgs, 1);
	ioapic_eoi(f.io, 0x3b); /* another vector: nothing */
	ck_assert_uint_eq(f.n_msgs, 1);
	ioapic_eoi(f.io, 0x3a); /* still asserted: again */
	ck_assert_uint_eq(f.n_msgs, 2);
	ioapic_set_irq(f.io, 10, false);
	ioapic_eoi(f.io, 0x3a);
	ck_assert_uint_eq(f.n_msgs, 2);
	ck_assert_uint_eq(get_rte(&f, 10) & (1u << 14), 0);
	/* an EOI broadcast reaches every pin with the vector */
	set_rte(&f, 11, 0x000000000000803aull);
	ioapic_set_irq(f.io, 10, true);
	ioapic_set_irq(f.io, 11, true);
	ck_assert_uint_eq(f.n_msgs, 4);
	ioapic_set_irq(f.io, 10, false);
	ioapic_eoi(f.io, 0x3a);
	ck_assert_uint_eq(f.n_msgs, 5); /* only 11 is still asserted */
	/* switching to edge clears a stale remote IRR */
	set_rte(&f, 11, 0x000000000000003aull);
	ck_assert_uint_eq(get_rte(&f, 11) & (1u << 14), 0);
	io_fini(&f);
}
END_TEST

START_TEST(info_and_reset)
{
	struct io_fixture f;
	char buf[4096];
	size_t n;

	io_init(&f);
	set_rte(&f, 2, 0x0100000000000030ull);
	set_rte(&f, 9, 0x000000000000a939ull);
	ioapic_set_irq(f.io, 9, true);
	n = ioapic_info(f.io, buf, sizeof(buf));
	ck_assert_uint_lt(n, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "ioapic0: ver=0x11 id=0x00 sel=0x22 (redir[9])\n"));
	ck_assert_ptr_nonnull(strstr(buf, "  pin 2  0x0100000000000030 dest=1 vec=48  active-hi "
					  "edge         fixed  physical\n"));
	ck_assert_ptr_nonnull(strstr(buf, "  pin 9  0x000000000000e939 dest=0 vec=57  active-lo "
					  "level        lowest logical\n"));
	ck_assert_ptr_nonnull(strstr(buf, "  pin 23 0x0000000000010000 dest=0 vec=0   active-hi "
					  "edge  masked fixed  physical\n"));
	ck_assert_ptr_nonnull(strstr(buf, "  IRR        9\n  Remote IRR 9\n"));
	ck_assert_uint_eq(ioapic_info(f.io, buf, 16), n);
	dev_reset_all(&f.t.host);
	ck_assert_uint_eq(get_rte(&f, 9), 0x10000);
	ck_assert_uint_eq(ioapic_irq_count(f.io, 9), 0);
	ioapic_info(f.io, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "  IRR        (none)\n"));
	io_fini(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ioapic");
	TCase *tc = tcase_create("ioapic");

	tcase_add_test(tc, identity_and_table);
	tcase_add_test(tc, edge_delivery_and_mask);
	tcase_add_test(tc, level_remote_irr_and_eoi);
	tcase_add_test(tc, info_and_reset);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
