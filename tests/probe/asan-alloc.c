/* asan-alloc.c - an AddressSanitizer program for the memory-limit tests (issue 22):
 * ASan reserves terabytes of shadow address space at start, so it runs only where a
 * limit counts memory really used, not address space reserved.  It fills 16 MiB and
 * prints "asan: ok 1"; with an argument it writes past that block first, which ASan
 * must catch (heap-buffer-overflow), to show it is really instrumented.
 * Built by the tests: gcc -fsanitize=address -static-libasan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	size_t n = 16 << 20;
	char *p = malloc(n);

	(void)argv;
	if (!p)
		return 1;
	memset(p, 1, n);
	volatile char *q = p;
	if (argc > 1)
		q[n + 8] = 1; /* the overflow ASan must catch */
	printf("asan: ok %d\n", p[n - 1]);
	free(p);
	return 0;
}
