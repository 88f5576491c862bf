/* replay.h - main() for a fuzz target built without libFuzzer: each file named on
 * the command line goes once through LLVMFuzzerTestOneInput (the corpus replay
 * of `make check-unit`).  Include it last; NSRUN_LIBFUZZER leaves it empty. */
#ifndef NSRUN_FUZZ_REPLAY_H
#define NSRUN_FUZZ_REPLAY_H
#ifndef NSRUN_LIBFUZZER
#include <stdio.h>
#include <stdlib.h>

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rbe");
	char *buf = NULL;
	long len;
	int rc = -1;

	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)len + 1);
		if (buf && fread(buf, 1, (size_t)len, f) == (size_t)len) {
			LLVMFuzzerTestOneInput((const uint8_t *)buf, (size_t)len);
			rc = 0;
		}
	}
	free(buf);
	fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	int failed = 0;

	for (int i = 1; i < argc; i++) {
		if (replay_file(argv[i]) < 0) {
			fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[i]);
			failed = 1;
		}
	}
	printf("%s: replayed %d input%s\n", argv[0], argc - 1 - failed, argc == 2 ? "" : "s");
	return failed;
}
#endif
#endif
