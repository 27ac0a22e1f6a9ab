/* dump.c — HMP `dump-guest-memory FILE`: the guest as an ELF core file
 * that gdb (and the crash utility) read, as QEMU's dump without paging:
 * one PT_LOAD per RAM region at its guest-physical address, p_vaddr equal
 * to p_paddr (so a debugger's addresses are physical), and a PT_NOTE with
 * one NT_PRSTATUS per vCPU — the general registers in the order of
 * Linux's struct user_regs_struct, the vCPU index + 1 as the "pid". The
 * machine is paused while the file is written, so memory and registers
 * are one consistent snapshot. */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/procfs.h>

#include "devices/dev_host.h"
#include "vmm/control/monitor.h"
#include "vmm/machine.h"

#define NOTE_NAME "CORE"
#define NOTE_NAME_SIZE 8 /* "CORE\0" padded to 4 bytes */
#define NOTE_SIZE (sizeof(Elf64_Nhdr) + NOTE_NAME_SIZE + sizeof(struct elf_prstatus))
#define DATA_ALIGN 4096

/* user_regs_struct's order: r15 ... rdi, orig_rax, rip, cs, eflags, rsp,
 * ss, fs_base, gs_base, ds, es, fs, gs. */
static void fill_prstatus(struct elf_prstatus *p, unsigned cpu, const struct kvm_regs *r,
			  const struct kvm_sregs *s)
{
	const unsigned long long g[ELF_NGREG] = {
		r->r15,		r->r14,		r->r13,		r->r12,		r->rbp,
		r->rbx,		r->r11,		r->r10,		r->r9,		r->r8,
		r->rax,		r->rcx,		r->rdx,		r->rsi,		r->rdi,
		r->rax,		r->rip,		s->cs.selector, r->rflags,	r->rsp,
		s->ss.selector, s->fs.base,	s->gs.base,	s->ds.selector, s->es.selector,
		s->fs.selector, s->gs.selector,
	};

	memset(p, 0, sizeof(*p));
	p->pr_pid = (int)cpu + 1;
	memcpy(p->pr_reg, g, sizeof(g));
}

static int write_notes(struct machine *m, FILE *f)
{
	for (unsigned i = 0; i < m->ncpus; i++) {
		Elf64_Nhdr nh = {.n_namesz = sizeof(NOTE_NAME),
				 .n_descsz = sizeof(struct elf_prstatus),
				 .n_type = NT_PRSTATUS};
		char name[NOTE_NAME_SIZE] = NOTE_NAME;
		struct elf_prstatus pr;
		struct kvm_sregs s;
		struct kvm_regs r;

		if (kvm_vcpu_get_regs(&m->vcpus[i].kvm, &r) < 0 ||
		    kvm_vcpu_get_sregs(&m->vcpus[i].kvm, &s) < 0)
			return -EIO;
		fill_prstatus(&pr, i, &r, &s);
		if (fwrite(&nh, sizeof(nh), 1, f) != 1 || fwrite(name, sizeof(name), 1, f) != 1 ||
		    fwrite(&pr, sizeof(pr), 1, f) != 1)
			return -errno;
	}
	return 0;
}

static void write_headers(struct machine *m, FILE *f, uint64_t *data_off)
{
	const struct guest_mem *gm = &m->mem;
	Elf64_Ehdr eh = {
		.e_ident = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
			    EV_CURRENT},
		.e_type = ET_CORE,
		.e_machine = EM_X86_64,
		.e_version = EV_CURRENT,
		.e_phoff = sizeof(Elf64_Ehdr),
		.e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr),
		.e_phnum = (Elf64_Half)(1 + gm->n),
	};
	uint64_t notes_off = sizeof(eh) + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr);
	Elf64_Phdr note = {.p_type = PT_NOTE,
			   .p_offset = notes_off,
			   .p_filesz = (uint64_t)m->ncpus * NOTE_SIZE,
			   .p_align = 4};
	uint64_t off = (notes_off + note.p_filesz + DATA_ALIGN - 1) & ~(uint64_t)(DATA_ALIGN - 1);

	fwrite(&eh, sizeof(eh), 1, f);
	fwrite(&note, sizeof(note), 1, f);
	*data_off = off;
	for (unsigned i = 0; i < gm->n; i++) {
		Elf64_Phdr ph = {.p_type = PT_LOAD,
				 .p_flags = PF_R | PF_W | PF_X,
				 .p_offset = off,
				 .p_vaddr = gm->r[i].gpa,
				 .p_paddr = gm->r[i].gpa,
				 .p_filesz = gm->r[i].size,
				 .p_memsz = gm->r[i].size,
				 .p_align = DATA_ALIGN};

		fwrite(&ph, sizeof(ph), 1, f);
		off += gm->r[i].size;
	}
}

static int write_core(struct machine *m, FILE *f)
{
	const struct guest_mem *gm = &m->mem;
	uint64_t data_off;
	int ret;

	write_headers(m, f, &data_off);
	ret = write_notes(m, f);
	if (ret < 0)
		return ret;
	if (fseeko(f, (off_t)data_off, SEEK_SET) < 0)
		return -errno;
	for (unsigned i = 0; i < gm->n; i++)
		if (fwrite(gm->r[i].hva, 1, gm->r[i].size, f) != gm->r[i].size)
			return -errno;
	return fflush(f) ? -errno : 0;
}

void hmp_dump_guest_memory(struct machine *m, int argc, char **argv, FILE *out)
{
	FILE *f;
	int ret;

	if (argc != 2) {
		fprintf(out, "usage: dump-guest-memory FILE\n");
		return;
	}
	if (!m->ncpus) {
		fprintf(out, "dump-guest-memory: there is no guest\n");
		return;
	}
	f = fopen(argv[1], "wbx");
	if (!f) {
		fprintf(out, "dump-guest-memory: %s: %s\n", argv[1], strerror(errno));
		return;
	}
	machine_pause(m);
	ret = write_core(m, f);
	machine_resume(m);
	if (fclose(f) && !ret)
		ret = -errno;
	if (ret < 0) {
		fprintf(out, "dump-guest-memory: %s: %s\n", argv[1], strerror(-ret));
		remove(argv[1]);
	}
}
