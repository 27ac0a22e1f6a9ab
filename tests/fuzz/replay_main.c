/* replay_main.c — the main() of a fuzz target built as a plain program
 * (gcc, no libFuzzer): feeds every file named on the command line, or every
 * file of tests/fuzz/corpus/NAME/ when none is (NAME: this program's file
 * name), to LLVMFuzzerTestOneInput. `make check` runs each target this way,
 * so every seed and every crash reproducer is a regression test, under the
 * normal and the ASan/UBSan build. Each input sits in a buffer of exactly
 * its size, so the sanitizers catch a read past its end. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz.h"

/* As libFuzzer's -malloc_limit_mb (its default, the 2048 MiB RSS limit):
 * one allocation over 2 GiB is a finding, so an OOM reproducer fails the
 * ASan replay (a plain build would just allocate it). */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "max_allocation_size_mb=2048:allocator_may_return_null=0";
}

/* Optional in a target (libFuzzer calls it when present). */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct stat sb;
	uint8_t *buf;

	if (!f || fstat(fileno(f), &sb) < 0) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		if (f)
			fclose(f);
		return -1;
	}
	buf = malloc(sb.st_size ? (size_t)sb.st_size : 1);
	if (!buf || fread(buf, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)sb.st_size);
	free(buf);
	return 0;
}

/* Replays a file, or every regular file of a folder in name order. */
static int replay_path(const char *path, unsigned *count)
{
	struct dirent **names;
	struct stat sb;
	int n, rc = 0;

	if (stat(path, &sb) < 0) {
		fprintf(stderr, "replay: no such file or folder: %s\n", path);
		return -1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	n = scandir(path, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		char full[4096];

		snprintf(full, sizeof(full), "%s/%s", path, names[i]->d_name);
		if (names[i]->d_name[0] != '.' && !stat(full, &sb) && S_ISREG(sb.st_mode)) {
			(*count)++;
			rc |= replay_file(full);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	char dflt[512];
	unsigned count = 0;
	int rc = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	if (argc < 2) {
		snprintf(dflt, sizeof(dflt), "tests/fuzz/corpus/%s", name);
		rc = replay_path(dflt, &count);
	}
	for (int i = 1; i < argc; i++)
		rc |= replay_path(argv[i], &count);
	if (!count) {
		fprintf(stderr, "replay: %s: no inputs\n", name);
		return 1;
	}
	printf("%s: replayed %u inputs\n", name, count);
	return rc ? 1 : 0;
}
