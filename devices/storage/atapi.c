/* atapi.c — the MMC command set of an ATAPI CD/DVD-ROM drive, shared by
 * the controllers that carry packets (IDE today).
 *
 * The drive is a single-track data disc (track 1 at LBA 0) in 2048-byte
 * sectors, read-only, with a tray the guest can lock. Every field of a
 * CDB is checked: a bad one is CHECK CONDITION / ILLEGAL REQUEST, an
 * unknown opcode INVALID COMMAND OPERATION CODE. Replies are cut to the
 * allocation length the guest gave. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "build/config.h"
#include "backends/backends.h"
#include "devices/storage/atapi.h"
#include "state/state.h"

/* additional sense codes (ASC << 8 | ASCQ) */
#define ASC_READ_ERROR 0x1100
#define ASC_INVALID_OPCODE 0x2000
#define ASC_LBA_OUT_OF_RANGE 0x2100
#define ASC_INVALID_FIELD 0x2400
#define ASC_MEDIUM_CHANGED 0x2800
#define ASC_SAVING_UNSUPPORTED 0x3900
#define ASC_NO_MEDIUM_TRAY_CLOSED 0x3a01
#define ASC_NO_MEDIUM_TRAY_OPEN 0x3a02
#define ASC_REMOVAL_PREVENTED 0x5302

/* GET EVENT STATUS NOTIFICATION media event codes */
#define EV_NONE 0
#define EV_NEW_MEDIA 2
#define EV_MEDIA_REMOVAL 3

/* discs bigger than a CD report the DVD-ROM profile */
#define CD_MAX_SECTORS (80ull * 60 * 75)

struct atapi {
	pthread_mutex_t lock;
	struct block_dev *medium;
	bool tray_open, locked, unit_attention;
	uint8_t sense_key;
	uint16_t asc;
	uint8_t event;
	void (*tray_moved)(void *opaque, bool open);
	void *tray_opaque;
};

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static uint32_t get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t get32(const uint8_t *p)
{
	return get16(p) << 16 | get16(p + 2);
}

/* ------------------------------------------------------------- state */

struct atapi *atapi_new(struct block_dev *medium)
{
	struct atapi *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	pthread_mutex_init(&a->lock, NULL);
	a->medium = medium;
	return a;
}

void atapi_save(struct atapi *a, struct state_writer *w)
{
	pthread_mutex_lock(&a->lock);
	state_put_u8(w, "atapi-tray-open", a->tray_open);
	state_put_u8(w, "atapi-locked", a->locked);
	state_put_u8(w, "atapi-unit-attention", a->unit_attention);
	state_put_u8(w, "atapi-sense-key", a->sense_key);
	state_put_u16(w, "atapi-asc", a->asc);
	state_put_u8(w, "atapi-event", a->event);
	pthread_mutex_unlock(&a->lock);
}

int atapi_load(struct atapi *a, struct state_node *n)
{
	bool tray_open, locked, ua;
	uint8_t key, event;
	uint16_t asc;

	if (state_get_bool(n, "atapi-tray-open", &tray_open) < 0 ||
	    state_get_bool(n, "atapi-locked", &locked) < 0 ||
	    state_get_bool(n, "atapi-unit-attention", &ua) < 0 ||
	    state_get_u8_max(n, "atapi-sense-key", 0x0f, &key) < 0 ||
	    state_get_u16(n, "atapi-asc", &asc) < 0 || state_get_u8(n, "atapi-event", &event) < 0)
		return -1;
	pthread_mutex_lock(&a->lock);
	a->tray_open = tray_open;
	a->locked = locked;
	a->unit_attention = ua;
	a->sense_key = key;
	a->asc = asc;
	a->event = event;
	pthread_mutex_unlock(&a->lock);
	return 0;
}

void atapi_free(struct atapi *a)
{
	if (!a)
		return;
	block_close(a->medium);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

void atapi_on_tray_moved(struct atapi *a, void (*fn)(void *opaque, bool open), void *opaque)
{
	a->tray_moved = fn;
	a->tray_opaque = opaque;
}

static uint64_t capacity(const struct atapi *a)
{
	return a->medium && !a->tray_open ? block_sectors(a->medium) / 4 : 0;
}

static bool ready(const struct atapi *a)
{
	return a->medium && !a->tray_open;
}

/* A CHECK CONDITION: keep the sense data, return the key. */
static int fail(struct atapi *a, uint8_t key, uint16_t asc)
{
	a->sense_key = key;
	a->asc = asc;
	return key;
}

static int not_ready(struct atapi *a)
{
	return fail(a, ATAPI_SK_NOT_READY,
		    a->tray_open ? ASC_NO_MEDIUM_TRAY_OPEN : ASC_NO_MEDIUM_TRAY_CLOSED);
}

static int bad_field(struct atapi *a)
{
	return fail(a, ATAPI_SK_ILLEGAL_REQUEST, ASC_INVALID_FIELD);
}

static void set_tray(struct atapi *a, bool open, bool guest)
{
	if (a->tray_open == open)
		return;
	a->tray_open = open;
	if (a->medium) {
		a->event = open ? EV_MEDIA_REMOVAL : EV_NEW_MEDIA;
		if (!open)
			a->unit_attention = true;
	}
	if (guest && a->tray_moved)
		a->tray_moved(a->tray_opaque, open);
}

/* ----------------------------------------------------- informational */

static uint32_t cmd_request_sense(struct atapi *a, uint8_t *r)
{
	memset(r, 0, 18);
	r[0] = 0x70; /* current error, fixed format */
	r[2] = a->sense_key;
	r[7] = 10;
	r[12] = (uint8_t)(a->asc >> 8);
	r[13] = (uint8_t)a->asc;
	a->sense_key = 0;
	a->asc = 0;
	return 18;
}

static void pad_string(uint8_t *dst, size_t n, const char *s)
{
	size_t len = strlen(s);

	memset(dst, ' ', n);
	memcpy(dst, s, len < n ? len : n);
}

static uint32_t cmd_inquiry(uint8_t *r)
{
	memset(r, 0, 36);
	r[0] = 0x05; /* CD/DVD device */
	r[1] = 0x80; /* removable */
	r[2] = 0x05; /* SPC-3 */
	r[3] = 0x32; /* ATAPI, response data format 2 */
	r[4] = 31;
	pad_string(&r[8], 8, "VMM");
	pad_string(&r[16], 16, "VMM DVD-ROM");
	pad_string(&r[32], 4, VMM_VERSION);
	return 36;
}

static uint32_t page_capabilities(const struct atapi *a, uint8_t *p)
{
	memset(p, 0, 22);
	p[0] = 0x2a;
	p[1] = 20;
	p[2] = 0x3b; /* reads CD-R, CD-RW, method 2, DVD-ROM, DVD-R */
	p[4] = 0x71; /* audio play, composite, digital port 1, multisession */
	p[5] = 0xff; /* CD-DA commands, accurate stream, R-W, C2 pointers, ISRC, UPC, bar code */
	/* lock supported, tray loading mechanism, eject; bit 1: locked */
	p[6] = (uint8_t)(0x29 | (a->locked ? 0x02 : 0));
	put16(&p[8], 8 * 176);	/* maximum speed (KB/s): 8x */
	put16(&p[10], 256);	/* volume levels */
	put16(&p[12], 512);	/* buffer size (KiB) */
	put16(&p[14], 8 * 176); /* current speed */
	return 22;
}

static uint32_t page_error_recovery(uint8_t *p)
{
	memset(p, 0, 8);
	p[0] = 0x01;
	p[1] = 6;
	p[3] = 5; /* read retry count */
	return 8;
}

static int cmd_mode_sense(struct atapi *a, const uint8_t *cdb, uint8_t *r, uint32_t *len)
{
	unsigned page = cdb[2] & 0x3f, control = cdb[2] >> 6;
	uint32_t n = 8;

	if (control == 3)
		return fail(a, ATAPI_SK_ILLEGAL_REQUEST, ASC_SAVING_UNSUPPORTED);
	memset(r, 0, 8);
	if (page == 0x01 || page == 0x3f)
		n += page_error_recovery(r + n);
	if (page == 0x2a || page == 0x3f)
		n += page_capabilities(a, r + n);
	if (n == 8)
		return bad_field(a);
	if (control == 1) /* changeable values: none */
		memset(r + 8, 0, n - 8);
	put16(r, n - 2);
	r[2] = ready(a) ? 0x01 : 0x70; /* 120 mm data disc, or door closed and no disc */
	*len = n;
	return 0;
}

/* ---------------------------------------------------------- the disc */

static void lba_to_msf(uint8_t *p, uint64_t lba)
{
	lba += 150; /* the 2-second pre-gap before LBA 0 */
	p[0] = (uint8_t)(lba / (75 * 60));
	p[1] = (uint8_t)(lba / 75 % 60);
	p[2] = (uint8_t)(lba % 75);
}

static void put_address(uint8_t *p, uint64_t lba, bool msf)
{
	if (msf) {
		p[0] = 0;
		lba_to_msf(p + 1, lba);
	} else {
		put32(p, (uint32_t)lba);
	}
}

static uint32_t toc_formatted(const struct atapi *a, unsigned track, bool msf, uint8_t *r)
{
	uint32_t n = 4;

	if (track <= 1) {
		memset(r + n, 0, 8);
		r[n + 1] = 0x14; /* ADR 1: position, control 4: data track */
		r[n + 2] = 1;
		put_address(r + n + 4, 0, msf);
		n += 8;
	}
	memset(r + n, 0, 8);
	r[n + 1] = 0x14;
	r[n + 2] = 0xaa; /* lead-out */
	put_address(r + n + 4, capacity(a), msf);
	n += 8;
	put16(r, n - 2);
	r[2] = r[3] = 1; /* first and last track */
	return n;
}

static uint32_t toc_session(bool msf, uint8_t *r)
{
	memset(r, 0, 12);
	put16(r, 10);
	r[2] = r[3] = 1; /* first and last session */
	r[5] = 0x14;
	r[6] = 1; /* first track of the last session */
	put_address(r + 8, 0, msf);
	return 12;
}

/* Raw TOC: the Q sub-channel points A0 (first track), A1 (last track),
 * A2 (lead-out) and track 1, addresses always in MSF. */
static uint32_t toc_raw(const struct atapi *a, uint8_t *r)
{
	static const uint8_t points[4] = {0xa0, 0xa1, 0xa2, 0x01};
	uint32_t n = 4;

	for (unsigned i = 0; i < 4; i++, n += 11) {
		uint8_t *d = r + n;

		memset(d, 0, 11);
		d[0] = 1; /* session */
		d[1] = 0x14;
		d[3] = points[i];
		if (points[i] == 0xa0 || points[i] == 0xa1)
			d[8] = 1; /* track number; disc type 0 (CD-ROM) */
		else
			lba_to_msf(d + 8, points[i] == 0xa2 ? capacity(a) : 0);
	}
	put16(r, n - 2);
	r[2] = r[3] = 1;
	return n;
}

static int cmd_read_toc(struct atapi *a, const uint8_t *cdb, uint8_t *r, uint32_t *len)
{
	bool msf = cdb[1] & 0x02;
	unsigned format = cdb[2] & 0x0f, track = cdb[6];

	if (!format && cdb[9] >> 6) /* the old SFF-8020 place for the format */
		format = cdb[9] >> 6;
	switch (format) {
	case 0:
		if (track > 1 && track != 0xaa)
			return bad_field(a);
		*len = toc_formatted(a, track, msf, r);
		return 0;
	case 1:
		*len = toc_session(msf, r);
		return 0;
	case 2:
		*len = toc_raw(a, r);
		return 0;
	default:
		return bad_field(a);
	}
}

static int cmd_read_capacity(struct atapi *a, uint8_t *r, uint32_t *len)
{
	put32(r, (uint32_t)(capacity(a) - 1));
	put32(r + 4, ATAPI_SECTOR);
	*len = 8;
	return 0;
}

static uint32_t cmd_disc_info(const struct atapi *a, uint8_t *r)
{
	(void)a;
	memset(r, 0, 34);
	put16(r, 32);
	r[2] = 0x0e; /* last session and disc complete */
	r[3] = 1;    /* first track */
	r[4] = 1;    /* sessions */
	r[5] = 1;    /* first and last track of the last session */
	r[6] = 1;
	r[7] = 0x20; /* unrestricted use */
	memset(&r[16], 0xff, 8); /* no lead-in / lead-out start times */
	return 34;
}

/* READ(10)/(12) and SEEK: the range checked against the disc. */
static int check_range(struct atapi *a, uint64_t lba, uint64_t count)
{
	uint64_t cap = capacity(a);

	if (lba > cap || count > cap - lba)
		return fail(a, ATAPI_SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
	return 0;
}

static int cmd_read(struct atapi *a, uint64_t lba, uint32_t count, struct atapi_xfer *x)
{
	int r = check_range(a, lba, count);

	if (r)
		return r;
	x->read_lba = lba;
	x->read_sectors = count;
	return 0;
}

/* -------------------------------------------------- features, events */

static uint16_t current_profile(const struct atapi *a)
{
	if (!ready(a))
		return 0;
	return capacity(a) > CD_MAX_SECTORS ? 0x0010 : 0x0008; /* DVD-ROM : CD-ROM */
}

/* One feature descriptor into r (NULL: only its length). */
static uint32_t feature(const struct atapi *a, unsigned code, uint8_t *r)
{
	uint16_t profile = current_profile(a);

	switch (code) {
	case 0x0000: /* profile list: DVD-ROM, CD-ROM */
		memset(r, 0, 12);
		r[2] = 0x03; /* persistent, current */
		r[3] = 8;
		put16(r + 4, 0x0010);
		r[6] = profile == 0x0010;
		put16(r + 8, 0x0008);
		r[10] = profile == 0x0008;
		return 12;
	case 0x0001: /* core: ATAPI */
		memset(r, 0, 12);
		put16(r, code);
		r[2] = 0x07;
		r[3] = 8;
		put32(r + 4, 2);
		r[8] = 1; /* device busy event */
		return 12;
	case 0x0003: /* removable medium: tray, eject, lock */
		memset(r, 0, 8);
		put16(r, code);
		r[2] = 0x03;
		r[3] = 4;
		r[4] = (uint8_t)(0x29 | (a->locked ? 0x04 : 0));
		return 8;
	case 0x0010: /* random readable: 2048-byte blocks */
		memset(r, 0, 12);
		put16(r, code);
		r[2] = (uint8_t)(profile ? 0x01 : 0);
		r[3] = 8;
		put32(r + 4, ATAPI_SECTOR);
		put16(r + 8, 1);
		return 12;
	default:
		return 0;
	}
}

static int cmd_get_configuration(struct atapi *a, const uint8_t *cdb, uint8_t *r, uint32_t *len)
{
	static const unsigned codes[] = {0x0000, 0x0001, 0x0003, 0x0010};
	unsigned rt = cdb[1] & 3, start = get16(&cdb[2]);
	uint32_t n = 8;

	if (rt == 3)
		return bad_field(a);
	memset(r, 0, 8);
	put16(r + 6, current_profile(a));
	for (unsigned i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		uint32_t m;

		if (rt == 2 ? codes[i] != start : codes[i] < start)
			continue;
		m = feature(a, codes[i], r + n);
		if (rt == 1 && !(r[n + 2] & 0x01))
			continue; /* not current */
		n += m;
	}
	put32(r, n - 4);
	*len = n;
	return 0;
}

static int cmd_event_status(struct atapi *a, const uint8_t *cdb, uint8_t *r, uint32_t *len)
{
	if (!(cdb[1] & 0x01)) /* asynchronous notification: not supported */
		return bad_field(a);
	memset(r, 0, 8);
	r[3] = 0x10; /* supported classes: media */
	if (!(cdb[4] & 0x10)) {
		put16(r, 2);
		r[2] = 0x80; /* no event available */
		*len = 4;
		return 0;
	}
	put16(r, 6);
	r[2] = 0x04; /* media class */
	r[4] = a->event;
	r[5] = (uint8_t)((a->tray_open ? 0x01 : 0) | (a->medium ? 0x02 : 0));
	a->event = EV_NONE;
	*len = 8;
	return 0;
}

static uint32_t cmd_mechanism_status(const struct atapi *a, uint8_t *r)
{
	memset(r, 0, 8);
	r[1] = (uint8_t)(a->tray_open ? 0x10 : 0); /* door open */
	return 8;
}

static int cmd_start_stop(struct atapi *a, const uint8_t *cdb)
{
	bool load_eject = cdb[4] & 0x02, start = cdb[4] & 0x01;

	if (!load_eject)
		return 0; /* spin up/down: nothing to do */
	if (!start && a->locked)
		return fail(a, ATAPI_SK_ILLEGAL_REQUEST, ASC_REMOVAL_PREVENTED);
	set_tray(a, !start, true);
	return 0;
}

/* ---------------------------------------------------------- dispatch */

/* Commands that need a disc in a closed tray. */
static bool needs_medium(uint8_t op)
{
	switch (op) {
	case 0x00: case 0x25: case 0x28: case 0xa8: case 0x2b: case 0x43: case 0x51:
		return true;
	default:
		return false;
	}
}

static int dispatch(struct atapi *a, const uint8_t *cdb, uint8_t *r, struct atapi_xfer *x)
{
	uint32_t *len = &x->reply_len;

	switch (cdb[0]) {
	case 0x00: /* TEST UNIT READY */
	case 0xbb: /* SET CD SPEED */
		return 0;
	case 0x03: *len = cmd_request_sense(a, r); return 0;
	case 0x12:
		if (cdb[1] & 0x01 || cdb[2]) /* vital product data: none */
			return bad_field(a);
		*len = cmd_inquiry(r);
		return 0;
	case 0x1b: return cmd_start_stop(a, cdb);
	case 0x1e: a->locked = cdb[4] & 0x01; return 0;
	case 0x25: return cmd_read_capacity(a, r, len);
	case 0x28: return cmd_read(a, get32(&cdb[2]), get16(&cdb[7]), x);
	case 0xa8: return cmd_read(a, get32(&cdb[2]), get32(&cdb[6]), x);
	case 0x2b: return check_range(a, get32(&cdb[2]), 0);
	case 0x43: return cmd_read_toc(a, cdb, r, len);
	case 0x46: return cmd_get_configuration(a, cdb, r, len);
	case 0x4a: return cmd_event_status(a, cdb, r, len);
	case 0x51:
		if (cdb[1] & 0x07)
			return bad_field(a);
		*len = cmd_disc_info(a, r);
		return 0;
	case 0x5a: return cmd_mode_sense(a, cdb, r, len);
	case 0xbd: *len = cmd_mechanism_status(a, r); return 0;
	default: return fail(a, ATAPI_SK_ILLEGAL_REQUEST, ASC_INVALID_OPCODE);
	}
}

/* Where each command keeps its allocation length (bytes of the CDB). */
static uint32_t allocation_length(const uint8_t *cdb)
{
	switch (cdb[0]) {
	case 0x03: case 0x12: return cdb[4];
	case 0x43: case 0x46: case 0x4a: case 0x51: case 0x5a: return get16(&cdb[7]);
	case 0xbd: return get16(&cdb[8]);
	default: return UINT32_MAX;
	}
}

int atapi_command(struct atapi *a, const uint8_t cdb[ATAPI_CDB_LEN], uint8_t *reply,
		  struct atapi_xfer *x)
{
	uint8_t op = cdb[0];
	uint32_t alloc;
	int r;

	memset(x, 0, sizeof(*x));
	pthread_mutex_lock(&a->lock);
	/* a changed medium is announced once, to the first command that
	 * is not one of those meant to find out what happened */
	if (a->unit_attention && op != 0x03 && op != 0x12 && op != 0x4a) {
		a->unit_attention = false;
		r = fail(a, ATAPI_SK_UNIT_ATTENTION, ASC_MEDIUM_CHANGED);
	} else if (needs_medium(op) && !ready(a)) {
		r = not_ready(a);
	} else {
		if (op != 0x03) { /* a command that runs clears the old sense */
			a->sense_key = 0;
			a->asc = 0;
		}
		r = dispatch(a, cdb, reply, x);
	}
	alloc = allocation_length(cdb);
	if (x->reply_len > alloc)
		x->reply_len = alloc;
	if (r)
		memset(x, 0, sizeof(*x));
	pthread_mutex_unlock(&a->lock);
	return r;
}

int atapi_read(struct atapi *a, uint64_t lba, void *buf, uint32_t count)
{
	int r = 0;

	pthread_mutex_lock(&a->lock);
	if (!ready(a))
		r = not_ready(a);
	else if (!(r = check_range(a, lba, count)) &&
		 block_read(a->medium, lba * 4, buf, count * 4))
		r = fail(a, ATAPI_SK_MEDIUM_ERROR, ASC_READ_ERROR);
	pthread_mutex_unlock(&a->lock);
	return r;
}

uint8_t atapi_sense_key(struct atapi *a)
{
	uint8_t k;

	pthread_mutex_lock(&a->lock);
	k = a->sense_key;
	pthread_mutex_unlock(&a->lock);
	return k;
}

/* ------------------------------------------------------ media changes */

int atapi_open_tray(struct atapi *a, bool force)
{
	int r = 0;

	pthread_mutex_lock(&a->lock);
	if (a->locked && !force)
		r = -EBUSY;
	else
		set_tray(a, true, false);
	pthread_mutex_unlock(&a->lock);
	return r;
}

void atapi_close_tray(struct atapi *a)
{
	pthread_mutex_lock(&a->lock);
	set_tray(a, false, false);
	pthread_mutex_unlock(&a->lock);
}

int atapi_eject(struct atapi *a, bool force)
{
	return atapi_change(a, NULL, force) ? -EBUSY : 0;
}

int atapi_change(struct atapi *a, struct block_dev *medium, bool force)
{
	pthread_mutex_lock(&a->lock);
	if (a->locked && !force) {
		pthread_mutex_unlock(&a->lock);
		return -EBUSY;
	}
	if (force)
		a->locked = false;
	set_tray(a, true, false);
	block_close(a->medium);
	a->medium = medium;
	if (medium) /* a new disc goes in and the tray closes, as `change` does */
		set_tray(a, false, false);
	pthread_mutex_unlock(&a->lock);
	return 0;
}

void atapi_get_state(struct atapi *a, struct atapi_state *s)
{
	pthread_mutex_lock(&a->lock);
	s->tray_open = a->tray_open;
	s->locked = a->locked;
	s->medium = a->medium;
	pthread_mutex_unlock(&a->lock);
}
