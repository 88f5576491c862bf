/* landlock-sandbox - a replica of Codex's Linux sandbox file-system ruleset, for
 * tests/integration/26-agent-sandboxes-tiers.t.
 *
 * Source: openai/codex, codex-rs/linux-sandbox/src/landlock.rs,
 * install_filesystem_landlock_rules_on_current_thread(): every file-system access
 * right of Landlock ABI 5 handled (best effort: those the kernel knows), read
 * (execute, read file, read dir) beneath "/", every right on /dev/null and on each
 * writable root (the workspace and /tmp under its workspace-write policy),
 * no_new_privs, then landlock_restrict_self.  Written from that description, not
 * copied.
 *
 *   landlock-sandbox [-w DIR]... -- CMD [ARG...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_READ_DIR (1ULL << 3)
#define FS_TRUNCATE (1ULL << 14)
#define FS_IOCTL_DEV (1ULL << 15)
#define FS_FILE_RIGHTS (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)

struct ruleset_attr {
	uint64_t handled_access_fs;
};

struct path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* AccessFs::from_all(ABI::V5) as far as the running kernel knows it */
static uint64_t all_rights(int abi)
{
	uint64_t r = (1ULL << 13) - 1;  /* ABI 1 */

	if (abi >= 2)
		r |= 1ULL << 13;        /* REFER */
	if (abi >= 3)
		r |= FS_TRUNCATE;
	if (abi >= 5)
		r |= FS_IOCTL_DEV;
	return r;
}

static int add(int ruleset, const char *path, uint64_t access)
{
	struct path_beneath pb = { .allowed_access = access };
	struct stat st;
	int rc;

	pb.parent_fd = open(path, O_PATH | O_CLOEXEC);
	if (pb.parent_fd < 0 || fstat(pb.parent_fd, &st) < 0) {
		fprintf(stderr, "landlock-sandbox: open %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		pb.allowed_access &= FS_FILE_RIGHTS;
	rc = (int)syscall(SYS_landlock_add_rule, ruleset, 1 /* PATH_BENEATH */, &pb, 0);
	if (rc < 0)
		fprintf(stderr, "landlock-sandbox: rule for %s: %s\n", path, strerror(errno));
	close(pb.parent_fd);
	return rc;
}

int main(int argc, char **argv)
{
	const char *writable[16];
	size_t n = 0;
	int i = 1, abi, ruleset;
	uint64_t all;
	struct ruleset_attr attr;

	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "-w") == 0 && i + 1 < argc && n < 16) {
			writable[n++] = argv[++i];
		} else {
			fprintf(stderr, "usage: landlock-sandbox [-w DIR]... -- CMD [ARG...]\n");
			return 2;
		}
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: landlock-sandbox [-w DIR]... -- CMD [ARG...]\n");
		return 2;
	}
	abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, 1 /* VERSION */);
	if (abi < 1) {
		fprintf(stderr, "landlock-sandbox: no Landlock here: %s\n", strerror(errno));
		return 3;
	}
	all = all_rights(abi > 5 ? 5 : abi);
	attr.handled_access_fs = all;
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0) {
		fprintf(stderr, "landlock-sandbox: create the ruleset: %s\n", strerror(errno));
		return 3;
	}
	if (add(ruleset, "/", FS_EXECUTE | FS_READ_FILE | FS_READ_DIR) < 0 || add(ruleset, "/dev/null", all) < 0)
		return 3;
	for (size_t k = 0; k < n; k++)
		if (add(ruleset, writable[k], all) < 0)
			return 3;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(SYS_landlock_restrict_self, ruleset, 0) < 0) {
		fprintf(stderr, "landlock-sandbox: enforce: %s\n", strerror(errno));
		return 3;
	}
	close(ruleset);
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "landlock-sandbox: exec %s: %s\n", argv[i + 1], strerror(errno));
	return 127;
}
