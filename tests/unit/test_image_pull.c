/* Unit tests of image_pull.c against a stand-in for the pull's child (`nsrun
 * pull ... docker://REF NAME`, image_fetch.h: a shell script at a made-up nsrun
 * path): its progress events become docker pull's steps in order; events it
 * does not know, malformed digests and an overlong line are skipped; a failed
 * pull gives the child's error line; the child's environment is the
 * allowlist; a hung-up client ends the pull. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image_pull.h"
#include "tap.h"

#define D1 "sha256:1111111111111111111111111111111111111111111111111111111111111111"
#define D2 "sha256:2222222222222222222222222222222222222222222222222222222222222222"
#define DM "sha256:abababababababababababababababababababababababababababababababab"

static char dir[64], self[128];

static void tool(const char *body)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s", self);
	f = fopen(path, "w");
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	chmod(path, 0755);
}

/* Every step as "ID: STATUS" lines; the outcome in *rc. */
static void steps(struct image_pull *p, char *out, size_t len, int *rc, struct nsrun_error *err)
{
	struct image_pull_step s;
	size_t o = 0;

	out[0] = '\0';
	while ((*rc = image_pull_next(p, &s, err)) > 0)
		o += (size_t)snprintf(out + o, len - o, "%s%s%s\n", s.id, s.id[0] ? ": " : "", s.status);
}

int main(void)
{
	struct tap t = { 0 };
	struct nsrun_error err = { 0 };
	struct image_pull p;
	struct image_ref ref;
	char out[8192], got[1100];
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/nsrun-unit-pull.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(self, sizeof(self), "%s/nsrun", dir);
	image_ref_parse("redis:7", &ref, &err);
	setenv("NSRUN_IMAGES", "/store", 1);
	setenv("SECRET_TOKEN", "x", 1);

	/* two layers, the events as image_fetch.c writes them, and noise */
	tool("echo digest " DM "; echo blob " D1 "; echo blob " D2 "; echo fetched " D2 "; echo fetched " D1 ";\n"
	     "echo future-event x; echo blob sha256:XYZ; echo blob; head -c 600 /dev/zero | tr '\\0' a; echo;\n"
	     "echo unpack; echo unpacked; echo 'not an event' >&2");
	rc = image_pull_start(&p, self, &ref, true, &err);
	tap_int(&t, "a pull starts", 0, rc);
	steps(&p, out, sizeof(out), &rc, &err);
	tap_int(&t, "  ... and succeeds", 0, rc);
	tap_str(&t, "  ... docker pull's steps, in order, the noise skipped",
		"7: Pulling from library/redis\n"
		"111111111111: Pulling fs layer\n111111111111: Downloading\n"
		"222222222222: Pulling fs layer\n222222222222: Downloading\n"
		"222222222222: Download complete\n111111111111: Download complete\n"
		"111111111111: Extracting\n222222222222: Extracting\n"
		"111111111111: Pull complete\n222222222222: Pull complete\n"
		"Digest: " DM "\nStatus: Downloaded newer image for redis:7\n",
		out);
	image_pull_close(&p);

	/* the child's argv and environment: the allowlist and the progress request */
	tool("echo \"$*\" >&2; env | sort >&2; exit 3");
	image_pull_start(&p, self, &ref, true, &err);
	steps(&p, out, sizeof(out), &rc, &err);
	tap_int(&t, "a failed pull: -1", -1, rc);
	tap_str(&t, "  ... saying the status", "pull failed: the pull exited with status 3", err.msg);
	tap_ok(&t,
	       strstr(p.tail, "pull --force --quiet docker://docker.io/library/redis:7 docker.io+library+redis=7\n") != NULL,
	       "  ... the tool's arguments");
	tap_ok(&t, strstr(p.tail, "NSRUN_IMAGES=/store\n") && strstr(p.tail, "NSRUN_IMAGE_PROGRESS=1\n") &&
			   !strstr(p.tail, "SECRET_TOKEN"),
	       "  ... its environment: the store, the progress request, not the rest of ours");
	image_pull_close(&p);

	tool("echo blob " D1 "; echo 'nsrun: pull \"x\": skopeo copy failed' >&2; echo 'nsrun: hint: h' >&2;"
	     " exit 1");
	image_pull_start(&p, self, &ref, true, &err);
	steps(&p, out, sizeof(out), &rc, &err);
	snprintf(got, sizeof(got), "%d %s", rc, p.why);
	tap_str(&t, "a failed pull's why: the child's error line", "-1 pull \"x\": skopeo copy failed", got);
	image_pull_close(&p);

	/* a client gone: the pull ends at once, the tool stopped */
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	tool("echo blob " D1 "; exec sleep 600");
	image_pull_start(&p, self, &ref, true, &err);
	p.client_fd = sv[0];
	struct image_pull_step s;
	image_pull_next(&p, &s, &err);
	close(sv[1]);
	while ((rc = image_pull_next(&p, &s, &err)) > 0)
		;
	snprintf(got, sizeof(got), "%d %d", rc, err.errnum);
	snprintf(out, sizeof(out), "-1 %d", ECONNRESET);
	tap_str(&t, "a client's hang-up ends the pull (ECONNRESET)", out, got);
	image_pull_close(&p);
	tap_ok(&t, p.pid == 0 && p.events_fd < 0, "  ... the tool stopped and reaped, its pipes closed");
	close(sv[0]);

	unlink(self);
	rmdir(dir);
	return tap_done(&t);
}
