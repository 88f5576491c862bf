/* Unit tests of docker cp's pure parts: --copy-archive TAR:DIR parsing
 * (config.c) and the stat JSON of X-Docker-Container-Path-Stat (copy_archive.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "copy_archive.h"
#include "tap.h"

static void parse_cases(struct tap *t)
{
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };
	static const char *const bad[] = { "x.tar", ":/tmp", "x.tar:", "x.tar:tmp", "x.tar:/tmp/../etc" };

	config_init(&cfg, &err);
	tap_ok(t, config_add_copy_archive(&cfg, "/proc/self/fd/7:/tmp//a/./b/", &err) == 0, "--copy-archive FD:DIR");
	tap_str(t, "  ... the archive", "/proc/self/fd/7", cfg.copy_archive_tars.v[0]);
	tap_str(t, "  ... the directory, normalised", "/tmp/a/b", cfg.copy_archive_dirs.v[0]);
	tap_ok(t, config_add_copy_archive(&cfg, "a.tar:/dir:with:colons", &err) == 0, "a directory with ':' in it");
	tap_str(t, "  ... split at the first ':'", "/dir:with:colons", cfg.copy_archive_dirs.v[1]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char desc[96];
		snprintf(desc, sizeof(desc), "--copy-archive \"%s\" is rejected (a validation error)", bad[i]);
		tap_ok(t, config_add_copy_archive(&cfg, bad[i], &err) < 0 && err.errnum == 0, desc);
	}
	tap_int(t, "  ... and adds nothing", 2, (long long)cfg.copy_archive_tars.n);
	while (cfg.copy_archive_tars.n < NSRUN_MAX_COPY_ARCHIVES)
		config_add_copy_archive(&cfg, "a.tar:/tmp", &err);
	tap_ok(t, config_add_copy_archive(&cfg, "a.tar:/tmp", &err) < 0 && strstr(err.msg, "more than"),
	       "more than NSRUN_MAX_COPY_ARCHIVES: refused");
	config_free(&cfg);
}

static void stat_cases(struct tap *t)
{
	struct stat st = { .st_mode = S_IFDIR | 0755, .st_size = 4096 };
	char *j;

	st.st_mtim.tv_sec = 86400;
	st.st_mtim.tv_nsec = 5;
	j = copy_archive_stat_json(&st, "/tmp/", "");
	tap_str(t, "a directory: its name, Go's ModeDir, RFC 3339 with nanoseconds",
		"{\"name\":\"tmp\",\"size\":4096,\"mode\":2147484141,\"mtime\":\"1970-01-02T00:00:00.000000005Z\","
		"\"linkTarget\":\"\"}", j);
	free(j);
	st.st_mode = S_IFLNK | 0777;
	st.st_size = 7;
	j = copy_archive_stat_json(&st, "/bin", "/usr/bin");
	tap_ok(t, j && strstr(j, "\"name\":\"bin\"") && strstr(j, "\"mode\":134218239") &&
	       strstr(j, "\"linkTarget\":\"/usr/bin\""), "a symlink: Go's ModeSymlink, its target");
	free(j);
	st.st_mode = S_IFREG | S_ISUID | 0640;
	j = copy_archive_stat_json(&st, "/", "");
	tap_ok(t, j && strstr(j, "\"name\":\".\"") && strstr(j, "\"mode\":8389024"), "the root is \".\"; setuid is Go's");
	free(j);
}

int main(void)
{
	struct tap t = { 0 };

	parse_cases(&t);
	stat_cases(&t);
	return tap_done(&t);
}
