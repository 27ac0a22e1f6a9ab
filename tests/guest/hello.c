/* hello.elf — the smallest payload: one line on COM1, exit code 0. */
#include "kit.h"

int guest_main(void)
{
	printf("hello from guest\n");
	return 0;
}
