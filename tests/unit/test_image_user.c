/* Unit tests of image_user_lookup (image_user.c): Docker's User by name, looked up
 * in the image's own /etc/passwd and /etc/group, never the host's (a link of the
 * image that climbs out meets the image's root), with Docker's words for a name
 * that is not there.  Builds small trees in a temporary directory. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "image_user.h"
#include "tap.h"

static char root[PATH_MAX];

static void put(const char *rel, const char *text)
{
	char p[PATH_MAX + 64];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	unlink(p);
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void ln(const char *target, const char *rel)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	unlink(p);
	if (symlink(target, p) < 0)
		perror(p);
}

/* "UID:GID g1,g2" of spec, or "error: MSG" */
static const char *look(const char *spec)
{
	static char out[512];
	struct nsrun_error err = { 0 };
	gid_t groups[8];
	size_t n = 0, o;
	uid_t uid;
	gid_t gid;
	int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (image_user_lookup(fd, spec, &uid, &gid, groups, 8, &n, &err) < 0) {
		snprintf(out, sizeof(out), "error: %s%s%s", err.msg, err.errnum ? ": " : "",
			 err.errnum ? strerror(err.errnum) : "");
	} else {
		o = (size_t)snprintf(out, sizeof(out), "%u:%u", (unsigned)uid, (unsigned)gid);
		for (size_t i = 0; i < n; i++)
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%u", i ? "," : " ", (unsigned)groups[i]);
	}
	close(fd);
	return out;
}

int main(void)
{
	struct tap t = { 0 };
	const char *tmp = getenv("TMPDIR");
	char p[PATH_MAX + 64];

	snprintf(root, sizeof(root), "%s/nsrun-test-image-user.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root)) {
		printf("1..0 # SKIP mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(p, sizeof(p), "%s/etc", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/lib", root);
	mkdir(p, 0755);

	tap_ok(&t, image_user_spec_valid("redis") && image_user_spec_valid("postgres:postgres") &&
	       image_user_spec_valid("1000:staff") && image_user_spec_valid("app:1000") &&
	       image_user_spec_valid("machine$"), "names and numbers are a spec");
	tap_ok(&t, !image_user_spec_valid("") && !image_user_spec_valid("a:") && !image_user_spec_valid(":a") &&
	       !image_user_spec_valid("-x") && !image_user_spec_valid("a:b:c") && !image_user_spec_valid("a b") &&
	       !image_user_spec_valid("a/b") && !image_user_spec_valid("a$b"), "  ... empty parts, spaces, '/', '-' first are not");

	tap_str(&t, "no /etc/passwd: Docker's words", "error: unable to find user redis: no matching entries in passwd file",
		look("redis"));
	put("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"
		"this line is garbage\n"
		"redis:x:999:998::/data:/bin/false\n"
		"postgres:x:70:70::/var/lib/postgresql:/bin/sh\n"
		"big:x:70000:70000::/:/bin/sh\n");
	put("etc/group", "root:x:0:\nredis:x:998:\nstaff:x:50:redis,postgres\npostgres:x:70:\nwheel:x:10:redis\n");
	tap_str(&t, "a name: its uid and gid, and the groups that list it", "999:998 50,10", look("redis"));
	tap_str(&t, "name:group: the group's gid, no supplementary groups", "70:50", look("postgres:staff"));
	tap_str(&t, "uid:group", "1000:50", look("1000:staff"));
	tap_str(&t, "name:gid", "999:7", look("redis:7"));
	tap_str(&t, "an unknown user: Docker's words", "error: unable to find user nosuch: no matching entries in passwd file",
		look("nosuch"));
	tap_str(&t, "an unknown group: Docker's words",
		"error: unable to find group nosuch: no matching entries in group file", look("redis:nosuch"));
	tap_str(&t, "a uid beyond the container's ids is refused",
		"error: user \"big\" is id 70000 in the image: beyond the ids a container has (0 to 65534)", look("big"));
	tap_str(&t, "  ... a number too", "error: group \"70000\" is id 70000 in the image: beyond the ids a container has "
		"(0 to 65534)", look("1:70000"));

	/* a link that climbs out of the image: resolved inside it, where it leads to
	 * itself; the host's /etc/passwd (which has root) is never read */
	ln("../../../../../../../../../../etc/passwd", "etc/passwd");
	tap_str(&t, "a link to the host's /etc/passwd is not followed out of the image",
		"error: unable to find user root: read /etc/passwd of the image: Too many levels of symbolic links",
		look("root"));
	ln("/proc/self/root/etc/passwd", "etc/passwd");
	tap_ok(&t, strncmp(look("root"), "error: ", 7) == 0, "  ... nor through /proc's magic links");
	put("lib/passwd", "svc:x:4321:4321::/:/bin/sh\n");
	ln("../../../../../../../../lib/passwd", "etc/passwd");
	tap_str(&t, "  control: a link inside the image is followed there", "4321:4321", look("svc"));
	snprintf(p, sizeof(p), "%s/etc/passwd", root);
	unlink(p);
	mkfifo(p, 0644);
	tap_str(&t, "a FIFO is not read (it would block)",
		"error: unable to find user svc: read /etc/passwd of the image (not a regular file): Invalid argument",
		look("svc"));
	unlink(p);
	{
		FILE *f = fopen(p, "w");
		for (int i = 0; f && i < 40000; i++)
			fprintf(f, "user%d:x:%d:%d::/:/bin/sh\n", i, i, i);
		if (f)
			fclose(f);
	}
	tap_str(&t, "a passwd past 1 MiB is not read",
		"error: unable to find user user1: read /etc/passwd of the image: File too large", look("user1"));

	if (tap_remove_tree(root) < 0)
		return 2;
	return tap_done(&t);
}
