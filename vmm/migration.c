/* migration.c — QMP migrate and -incoming on the machine: guest RAM, then
 * the state tree (devices, vCPUs, KVM), over a file, a command's pipe or
 * a Unix or TCP socket (stream format in migration.h).
 *
 * `migrate` answers at once and a migration thread does the work while
 * the guest runs (live pre-copy, the passes in migration_ram.c): when the
 * RAM left fits the downtime limit it stops the guest (STOP), sends the
 * last pages and the state, and the source stays stopped, as QEMU's
 * postmigrate state. migrate_cancel or a failure gives the guest back. A
 * device whose state vmm cannot save yet makes `migrate` fail naming it,
 * rather than write a stream that would restore it wrong. With the
 * return-path capability the source is `completed` only once the
 * destination said it loaded the stream (migration.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "devices/intc/i8259.h"
#include "devices/intc/ioapic.h"
#include "state/state.h"
#include "vmm/irqchip.h"
#include "vmm/machine.h"
#include "vmm/migration.h"
#include "vmm/migration_devices.h"

#define DEVICES_VERSION 1
#define RP_NEEDS_SOCKET "The return-path capability needs a socket (tcp:, unix: or a socket fd:)"

static struct migration_status mig;
static struct migration_params params = {
	.max_bandwidth = 128ull << 20, /* QEMU's defaults */
	.downtime_limit = 300,
	.throttle_initial = 20,
	.throttle_increment = 10,
	.throttle_max = 99,
};
static bool cancel_req;

struct migration_params *migration_params(void)
{
	return &params;
}

const struct migration_status *migration_status(void)
{
	return &mig;
}

/* Held where mig.precopy is set or cleared and where it is copied. */
static pthread_mutex_t precopy_lock = PTHREAD_MUTEX_INITIALIZER;

void migration_status_copy(struct migration_status *s, struct mig_precopy *pre)
{
	pthread_mutex_lock(&precopy_lock);
	*s = mig;
	if (mig.precopy) {
		*pre = *mig.precopy;
		s->precopy = pre;
	}
	pthread_mutex_unlock(&precopy_lock);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

const char *migration_state_name(enum migration_state s)
{
	static const char *const names[] = {"none",   "setup",	    "active",	"completed",
					    "failed", "cancelling", "cancelled"};

	return names[s];
}

static void set_status(struct machine *m, enum migration_state s)
{
	mig.state = s;
	machine_event(m, "MIGRATION", "{\"status\": \"%s\"}", migration_state_name(s));
}

/* The first device in the machine whose state is not saved, or NULL:
 * none today; a new device without a node goes here. */
static const char *unsaved_device(struct machine *m)
{
	(void)m;
	return NULL;
}

/* The kind of a hot-pluggable device present without an id, or NULL. */
static const char *hotplugged_without_id(const struct machine *m)
{
	for (unsigned i = 0; i < CLI_MAX_VIRTIO_DRIVES; i++)
		if (m->vblk[i] && !m->cfg->vblk[i].id[0])
			return "virtio-blk-pci";
	for (unsigned i = 0; i < CLI_MAX_NICS; i++)
		if (m->nics[i] && !m->cfg->nics[i].id[0])
			return "virtio-net-pci";
	return NULL;
}

/* Refuse unsaved devices; VMM_MIGRATE_UNSAVED=allow (tests of the vCPU
 * and RAM paths only) lets them through with a warning: they come back in
 * their power-on state. */
static int check_devices(struct machine *m, char *err, size_t errlen)
{
	const char *dev = unsaved_device(m);
	const char *allow = getenv("VMM_MIGRATE_UNSAVED");

	const char *unnamed = m->hotplug_changed ? hotplugged_without_id(m) : NULL;

	/* a device without an id is named by its place in the command line,
	 * which a run-time device_add or device_del no longer matches */
	if (unnamed) {
		snprintf(err, errlen,
			 "Migration after device_add or device_del needs an id= on every %s",
			 unnamed);
		return -1;
	}
	if (!dev)
		return 0;
	if (allow && !strcmp(allow, "allow")) {
		fprintf(stderr,
			"vmm: migrate: VMM_MIGRATE_UNSAVED=allow: '%s' and the devices "
			"after it are not saved\n",
			dev);
		return 0;
	}
	snprintf(err, errlen, "State blocked by non-migratable device '%s'", dev);
	return -1;
}

static int save_devices(struct machine *m, struct state_writer *w, struct net_handover *ho,
			char *err, size_t errlen)
{
	int r;

	state_begin(w, "devices", DEVICES_VERSION);
	for (unsigned i = 0; i < CLI_MAX_SERIALS; i++)
		if (m->serial[i])
			serial_save(m->serial[i], w);
	rtc_save(m->rtc, w);
	save_chipset(m, w);
	r = migration_virtio_save(m, w, err, errlen);
	if (r == 0)
		r = net_save(m, w, ho, err, errlen);
	state_end(w);
	return r;
}

static int load_devices(struct machine *m, const struct state_reader *root,
			const struct net_fds *fds, char *err, size_t errlen)
{
	struct state_reader devs;
	struct state_node n;

	if (state_node_open(&n, root, "devices", DEVICES_VERSION, err, errlen) < 0 ||
	    state_node_close(&n) < 0 || state_reader_sub(root, "devices", &devs, err, errlen) < 0)
		return -1;
	for (unsigned i = 0; i < CLI_MAX_SERIALS; i++)
		if (m->serial[i] && serial_load(m->serial[i], &devs, err, errlen) < 0)
			return -1;
	if (rtc_load(m->rtc, &devs, err, errlen) < 0)
		return -1;
	if (load_chipset(m, &devs, err, errlen) < 0 ||
	    migration_virtio_load(m, &devs, err, errlen) < 0)
		return -1;
	return net_load(m, &devs, fds, err, errlen);
}

static void machine_ram(struct machine *m, struct mig_ram *ram)
{
	ram->hva = m->ram;
	ram->size = m->ram_map_size;
}

/* ------------------------------------------------------- saving */

/* The size of the last tree this process built: the next migration's
 * writer takes it (and a quarter more) before it must grow. The first
 * takes TREE_FIRST_SIZE: a pc machine's tree is ~300 KiB, most of it the
 * 256 KiB of shadow RAM. */
#define TREE_FIRST_SIZE (512u << 10)
static size_t last_tree_len;

static struct state_writer *tree_writer_new(void)
{
	size_t n = __atomic_load_n(&last_tree_len, __ATOMIC_RELAXED);

	return state_writer_new_sized(n ? n + n / 4 : TREE_FIRST_SIZE);
}

/* The state into w (made before the guest stopped; NULL: a new one),
 * which this spends. */
static int build_tree(struct machine *m, struct state_writer *w, struct net_handover *ho,
		      void **tree, size_t *len, char *err, size_t errlen)
{
	if (!w && !(w = state_writer_new())) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (save_devices(m, w, ho, err, errlen) < 0 || cpu_state_save(m, w, err, errlen) < 0 ||
	    irqchip_save(m, w, err, errlen) < 0) {
		state_writer_free(w);
		return -1;
	}
	if (state_writer_finish(w, tree, len, err, errlen) < 0)
		return -1;
	__atomic_store_n(&last_tree_len, *len, __ATOMIC_RELAXED);
	return 0;
}

/* ------------------------------------------------------- disk images */

/* f on every writable disk of the machine (IDE, AHCI, virtio-blk); the
 * CD-ROMs' media are read-only, and readers never keep each other out. */
static int each_disk(struct machine *m, int (*f)(struct block_dev *, char *, size_t), char *err,
		     size_t errlen)
{
	for (unsigned i = 0; i < CLI_MAX_DRIVES; i++)
		if (m->disks[i] && f(m->disks[i], err, errlen) < 0)
			return -1;
	for (unsigned c = 0; c < CLI_MAX_AHCI; c++)
		for (unsigned p = 0; p < AHCI_PORTS; p++)
			if (m->sata_disks[c][p] && f(m->sata_disks[c][p], err, errlen) < 0)
				return -1;
	for (unsigned i = 0; i < CLI_MAX_VIRTIO_DRIVES; i++)
		if (m->vdisks[i] && f(m->vdisks[i], err, errlen) < 0)
			return -1;
	return 0;
}

int migration_activate_images(struct machine *m, char *err, size_t errlen)
{
	return each_disk(m, block_activate, err, errlen);
}

/* A source whose migration completed keeps its virtio queues frozen: a
 * request the guest made before the stop is the destination's to serve
 * now, and this process serving it too would write the disk behind the
 * destination's back (or send a frame twice). `cont` takes all back. */
static bool handed_over;

int migration_take_back(struct machine *m, char *err, size_t errlen)
{
	if (m->cfg->incoming && mig.state != MIG_COMPLETED) {
		snprintf(err, errlen, "The incoming migration has not completed");
		return -1;
	}
	if (migration_activate_images(m, err, errlen) < 0)
		return -1;
	if (handed_over && vmm_wlan_take_back(m, err, errlen) < 0)
		return -1;
	if (handed_over)
		migration_virtio_thaw(m);
	handed_over = false;
	return 0;
}

/* ------------------------------------------------------- the thread */

struct mig_job {
	struct machine *m;
	int fd;
	pid_t pid;
	char uri[512];
	bool was_running, stopped;
	struct mig_precopy pre;
	struct state_writer *writer; /* made while the guest ran */
	void *tree;		     /* the state, built when the guest stopped */
	size_t tree_len;
	int tree_r;
	char tree_err[256];
	uint64_t *kvm_ram; /* where the dirty log is on */
	/* unix: both ends on this host: user networking's host sockets go
	 * along (SCM_RIGHTS) and its connections carry on */
	bool same_host;
	struct net_handover ho;
	bool return_path;  /* wait for the destination's reply */
	pthread_t ticker; /* kicks the vCPUs while they are throttled */
	bool ticking;
};

/* While the vCPUs are throttled: kick each once a slice, so that one
 * running guest code without exits reaches its throttle sleep. */
static void *throttle_ticker(void *opaque)
{
	struct machine *m = opaque;
	const struct timespec slice = {0, (long)VCPU_THROTTLE_SLICE_NS};

	while (atomic_load(&m->throttle_pct)) {
		for (unsigned i = 0; i < m->ncpus; i++)
			vcpu_kick(&m->vcpus[i]);
		nanosleep(&slice, NULL);
	}
	return NULL;
}

static void job_set_throttle(void *opaque, unsigned pct)
{
	struct mig_job *j = opaque;
	struct machine *m = j->m;

	pthread_mutex_lock(&m->lock);
	atomic_store(&m->throttle_pct, pct);
	pthread_cond_broadcast(&m->cond); /* a vCPU asleep for the old share */
	pthread_mutex_unlock(&m->lock);
	if (pct && !j->ticking)
		j->ticking = pthread_create(&j->ticker, NULL, throttle_ticker, m) == 0;
}

/* The vCPUs run freely again. */
static void job_unthrottle(struct mig_job *j)
{
	job_set_throttle(j, 0);
	if (j->ticking)
		pthread_join(j->ticker, NULL);
	j->ticking = false;
}

static int job_sync_dirty(void *opaque, uint64_t *bits)
{
	struct mig_job *j = opaque;
	struct machine *m = j->m;
	int r;

	if (!j->kvm_ram) { /* the first call: start logging */
		/* completions mark their buffers from now on (virtq_push) */
		__atomic_store_n(&m->mem.tracking, true, __ATOMIC_SEQ_CST);
		r = kvm_vm_dirty_log_start(&m->vm, m->ram, m->ram_map_size);
		if (r == 0)
			j->kvm_ram = (uint64_t *)m->ram;
		return r;
	}
	return kvm_vm_dirty_log_sync(&m->vm, m->ram, m->ram_map_size, bits);
}

static void job_stop(void *opaque)
{
	struct mig_job *j = opaque;
	uint64_t t = now_ms();

	if (j->was_running)
		machine_user_stop(j->m); /* STOP */
	machine_pause(j->m);
	j->stopped = true;
	mig.downtime_ms = t; /* until the end, see job_finish */
	/* The state now, before the final pass: saving drains the virtio
	 * requests in flight and freezes the queues, and the completions
	 * those write land in pages the final pass then sends. */
	j->tree_r = build_tree(j->m, j->writer, j->same_host ? &j->ho : NULL, &j->tree,
			       &j->tree_len, j->tree_err, sizeof(j->tree_err));
	j->writer = NULL;
}

static void job_pass(void *opaque, unsigned pass)
{
	struct mig_job *j = opaque;

	if (pass == 1) {
		mig.setup_ms = now_ms() - mig.start_ms;
		set_status(j->m, MIG_ACTIVE);
	}
	machine_event(j->m, "MIGRATION_PASS", "{\"pass\": %u}", pass);
}

/* The RAM passes, then the state: 0, or -1 with err. */
static int job_send(struct mig_job *j, char *err, size_t errlen)
{
	struct mig_out o = {.fd = j->fd,
			    .st = &mig.stats,
			    .err = err,
			    .errlen = errlen,
			    .max_bps = params.max_bandwidth,
			    .cancel = &cancel_req};
	int r = mig_precopy_run(&j->pre, &o);

	if (r == 0 && j->tree_r < 0) {
		snprintf(err, errlen, "%s", j->tree_err);
		r = -1;
	}
	/* the destination takes the disks when the stream ends: hand them
	 * over first (flushed, qcow2 written out, the locks dropped) */
	if (r == 0)
		r = each_disk(j->m, block_inactivate, err, errlen);
	if (r == 0) {
		o.max_bps = 0; /* the guest is stopped: no throttle now */
		o.fds = j->ho.fds;
		o.nfds = j->ho.nfds;
		r = mig_out_end(&o, j->tree, j->tree_len);
	}
	/* the guest stays stopped until the destination runs it: its reply
	 * is part of the downtime */
	if (r == 0 && j->return_path)
		r = mig_rp_wait(j->fd, &cancel_req, err, errlen);
	free(j->tree);
	j->tree = NULL;
	return r;
}

static void job_finish(struct mig_job *j, int r, const char *err)
{
	struct machine *m = j->m;
	char again[256];

	job_unthrottle(j);
	if (j->kvm_ram)
		kvm_vm_dirty_log_stop(&m->vm, m->ram, m->ram_map_size);
	__atomic_store_n(&m->mem.tracking, false, __ATOMIC_SEQ_CST);
	/* the stream went out whole: the destination has the host sockets */
	net_handover_end(m, &j->ho, r == 0);
	if (j->stopped) {
		/* the guest stays stopped (STOP); after a failure its queues
		 * may run again, after success only once `cont` takes it back */
		if (r == 0) {
			handed_over = true;
			vmm_wlan_hand_over(m);
		} else
			migration_virtio_thaw(m);
		machine_resume(m);
	}
	pthread_mutex_lock(&precopy_lock);
	mig.dirty_syncs = j->pre.dirty_syncs;
	mig.mbps = j->pre.mbps;
	mig.precopy = NULL; /* j is freed once this returns */
	pthread_mutex_unlock(&precopy_lock);
	mig.total_ms = now_ms() - mig.start_ms;
	if (r == 0) {
		mig.downtime_ms = now_ms() - mig.downtime_ms;
		mig.stats.total = mig.ram_total;
		set_status(m, MIG_COMPLETED);
		return;
	}
	snprintf(mig.error, sizeof(mig.error), "%s", err);
	if (migration_activate_images(m, again, sizeof(again)) < 0)
		fprintf(stderr, "vmm: migrate: %s\n", again);
	/* as QEMU: a failed or cancelled migration gives the guest back */
	if (j->stopped && j->was_running)
		machine_user_cont(m);
	set_status(m, cancel_req ? MIG_CANCELLED : MIG_FAILED);
}

static void *migration_thread(void *opaque)
{
	struct mig_job *j = opaque;
	char err[256] = "";
	int r;

	j->writer = tree_writer_new(); /* NULL: build_tree makes one */
	r = job_send(j, err, sizeof(err));
	state_writer_free(j->writer); /* unused when the guest never stopped */

	if (mig_close_uri(j->fd, j->pid, j->uri, r < 0 ? NULL : err, r < 0 ? 0 : sizeof(err)) < 0)
		r = -1;
	job_finish(j, r, err);
	free(j);
	return NULL;
}

bool migration_running(void)
{
	return mig.state == MIG_SETUP || mig.state == MIG_ACTIVE || mig.state == MIG_CANCELLING;
}

int migration_save(struct machine *m, const char *uri, char *err, size_t errlen)
{
	struct mig_job *j;
	pthread_t t;

	if (migration_running()) {
		snprintf(err, errlen, "There's a migration process in progress");
		return -1;
	}
	if (check_devices(m, err, errlen) < 0)
		return -1;
	j = calloc(1, sizeof(*j));
	if (!j) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	j->m = m;
	snprintf(j->uri, sizeof(j->uri), "%s", uri);
	j->same_host = !strncmp(uri, "unix:", 5);
	j->was_running = machine_run_state(m) == RUN_STATE_RUNNING;
	j->return_path = params.return_path;
	j->fd = mig_open_uri(uri, true, &j->pid, err, errlen);
	if (j->fd < 0) {
		free(j);
		return -1;
	}
	if (j->return_path && !mig_rp_usable(j->fd)) {
		mig_close_uri(j->fd, j->pid, uri, NULL, 0);
		free(j);
		snprintf(err, errlen, "%s", RP_NEEDS_SOCKET);
		return -1;
	}
	machine_ram(m, &j->pre.ram);
	j->pre.sync_dirty = job_sync_dirty;
	j->pre.stop = job_stop;
	j->pre.on_pass = job_pass;
	j->pre.opaque = j;
	j->pre.touched = m->mem.touched;
	j->pre.pinned = m->mem.pinned;
	j->pre.downtime_ms = params.downtime_limit;
	j->pre.guest_stopped = !j->was_running;
	j->pre.throttle = (struct mig_throttle){.on = params.auto_converge,
						.initial = params.throttle_initial,
						.increment = params.throttle_increment,
						.max = params.throttle_max};
	j->pre.set_throttle = job_set_throttle;
	cancel_req = false;
	pthread_mutex_lock(&precopy_lock);
	mig = (struct migration_status){
		.start_ms = now_ms(), .ram_total = j->pre.ram.size, .precopy = &j->pre};
	pthread_mutex_unlock(&precopy_lock);
	set_status(m, MIG_SETUP);
	if (pthread_create(&t, NULL, migration_thread, j)) {
		mig_close_uri(j->fd, j->pid, uri, NULL, 0);
		free(j);
		snprintf(err, errlen, "cannot start the migration thread");
		set_status(m, MIG_FAILED);
		return -1;
	}
	pthread_detach(t);
	return 0;
}

void migration_cancel(struct machine *m)
{
	if (!migration_running() || mig.state == MIG_CANCELLING)
		return;
	__atomic_store_n(&cancel_req, true, __ATOMIC_RELAXED);
	set_status(m, MIG_CANCELLING);
}

/* ------------------------------------------------------- loading */

/* A file (file:PATH): its stored pages can be mapped rather than read, so
 * the guest runs before all its memory has been read, as Firecracker's
 * snapshots do. */
static bool is_regular_file(int fd)
{
	struct stat sb;

	return fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Load the tree, a malloc'd blob this takes. */
static int load_tree(struct machine *m, void *tree, size_t len, const struct net_fds *fds,
		     char *err, size_t errlen)
{
	struct state_reader root;
	int r;

	if (state_reader_adopt(&root, tree, len, err, errlen) < 0)
		return -1;
	r = load_devices(m, &root, fds, err, errlen);
	if (r == 0)
		r = cpu_state_load(m, &root, err, errlen);
	if (r == 0) /* after the vCPUs: the APICs' TSC deadlines need their TSC */
		r = irqchip_load(m, &root, err, errlen);
	/* Only now may the devices write to the guest and interrupt it: an
	 * interrupt raised before irqchip_load was lost in the APIC's loaded
	 * state, and the guest never read what came with it (usernet's
	 * resets of the connections whose host sockets stayed behind). */
	migration_virtio_thaw(m);
	state_reader_close(&root);
	return r;
}

/* Main thread: the machine pauses for the stream; fails unless it was
 * started with -incoming and has not run. */
static int incoming_begin(struct machine *m, char *err, size_t errlen)
{
	if (machine_run_state(m) != RUN_STATE_PRELAUNCH || !m->cfg->incoming) {
		snprintf(err, errlen, "The incoming migration needs vmm started with -incoming");
		return -1;
	}
	mig = (struct migration_status){.start_ms = now_ms()};
	set_status(m, MIG_SETUP);
	machine_pause(m);
	return 0;
}

/* The return path's reply to the source: load result r (0 or -1 with
 * err). A loaded guest whose source never heard so must not run: the
 * source runs its own copy on. */
static int incoming_reply(int fd, int r, char *err, size_t errlen)
{
	char why[256];

	if (mig_rp_send(fd, r == 0, why, sizeof(why)) == 0 || r < 0)
		return r;
	snprintf(err, errlen, "%s", why);
	return -1;
}

/* Read the stream from fd (or open uri when fd < 0) and load it: any
 * thread, the machine paused. 0, or -1 with err. */
static int incoming_load(struct machine *m, const char *uri, int fd, pid_t pid, bool return_path,
			 char *err, size_t errlen)
{
	struct mig_in in = {.nfds = 0};
	struct mig_ram ram;
	struct net_fds fds;
	void *tree = NULL;
	size_t len;
	int r;

	if (fd < 0)
		fd = mig_open_uri(uri, false, &pid, err, errlen);
	r = fd < 0 ? -1 : mig_stream_read_header(&in, fd, err, errlen);
	if (r == 0) {
		set_status(m, MIG_ACTIVE);
		machine_ram(m, &ram);
		/* The loader leaves zero pages alone: drop what booting wrote. */
		madvise(ram.hva, ram.size, MADV_DONTNEED);
		in.map_file = is_regular_file(fd) && in.base % MIG_PAGE == 0;
		r = mig_stream_read_ram(&in, &ram, 1, &mig.stats, err, errlen);
	}
	if (r == 0)
		r = mig_stream_read_tree(&in, &tree, &len, err, errlen);
	fds = (struct net_fds){in.fds, in.nfds, in.fds_lost};
	if (r == 0) {
		r = load_tree(m, tree, len, &fds, err, errlen);
		tree = NULL;
	}
	mig_in_close_fds(&in); /* the backends dup'd those they use */
	if (r == 0) /* the source let go of them before the stream ended */
		r = migration_activate_images(m, err, errlen);
	if (fd >= 0 && return_path)
		r = incoming_reply(fd, r, err, errlen);
	if (fd >= 0 && mig_close_uri(fd, pid, uri, r < 0 ? NULL : err, r < 0 ? 0 : errlen) < 0)
		r = -1;
	free(tree);
	return r;
}

/* Main thread: the loaded guest runs (unless -S), or the migration failed. */
static int incoming_finish(struct machine *m, int r, const char *err)
{
	machine_resume(m);
	mig.total_ms = now_ms() - mig.start_ms;
	if (r < 0)
		snprintf(mig.error, sizeof(mig.error), "%s", err);
	set_status(m, r == 0 ? MIG_COMPLETED : MIG_FAILED);
	if (r == 0 && !m->cfg->start_paused)
		machine_user_cont(m);
	return r;
}

int migration_incoming(struct machine *m, const char *uri, char *err, size_t errlen)
{
	if (incoming_begin(m, err, errlen) < 0)
		return -1;
	return incoming_finish(m, incoming_load(m, uri, -1, -1, params.return_path, err, errlen),
			       err);
}

struct incoming {
	struct machine *m;
	char uri[512];
	bool exit_on_error, return_path;
	int fd, lfd; /* the stream, or the socket its peer connects to */
	pid_t pid;
	int r;
	char err[256];
};

static void incoming_done(void *opaque)
{
	struct incoming *in = opaque;

	if (incoming_finish(in->m, in->r, in->err) < 0) {
		fprintf(stderr, "vmm: incoming migration: %s\n", in->err);
		if (in->exit_on_error) /* QEMU's default: nothing here is the guest */
			machine_request_exit(in->m, 1);
	}
	free(in);
}

static void *incoming_thread(void *opaque)
{
	struct incoming *in = opaque;

	if (in->lfd >= 0)
		in->fd = mig_accept_uri(in->lfd, in->uri, in->err, sizeof(in->err));
	in->r = in->fd < 0 ? -1
			   : incoming_load(in->m, in->uri, in->fd, in->pid, in->return_path, in->err,
					   sizeof(in->err));
	while (evloop_call(in->m->host.loop, incoming_done, in) < 0)
		usleep(10000); /* out of memory: the main thread must hear of it */
	return NULL;
}

int migration_incoming_start(struct machine *m, const char *uri, bool exit_on_error, char *err,
			     size_t errlen)
{
	struct incoming *in = calloc(1, sizeof(*in));
	pthread_t t;

	if (!in) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	in->m = m;
	in->exit_on_error = exit_on_error;
	in->return_path = params.return_path;
	in->fd = in->lfd = -1;
	snprintf(in->uri, sizeof(in->uri), "%s", uri);
	/* opened or listening here, where a bad URI is reported, and before
	 * QMP answers: the source may connect as soon as it has */
	if (mig_uri_waits(uri))
		in->lfd = mig_listen_uri(uri, err, errlen);
	else
		in->fd = mig_open_uri(uri, false, &in->pid, err, errlen);
	if (in->fd < 0 && in->lfd < 0) {
		free(in);
		return -1;
	}
	if (in->return_path && in->fd >= 0 && !mig_rp_usable(in->fd)) {
		mig_close_uri(in->fd, in->pid, uri, NULL, 0);
		free(in);
		snprintf(err, errlen, "%s", RP_NEEDS_SOCKET);
		return -1;
	}
	if (incoming_begin(m, err, errlen) < 0 ||
	    pthread_create(&t, NULL, incoming_thread, in) != 0) {
		if (in->fd >= 0)
			mig_close_uri(in->fd, in->pid, uri, NULL, 0);
		if (in->lfd >= 0)
			close(in->lfd);
		if (mig.state == MIG_SETUP) {
			snprintf(err, errlen, "cannot start the incoming migration's thread");
			incoming_finish(m, -1, err);
		}
		free(in);
		return -1;
	}
	pthread_detach(t);
	return 0;
}
