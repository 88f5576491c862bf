/* image_pull.h - `nsrun pull` and nsrun api's /images/create: one pull, its
 * progress as Docker's pull lines.
 *
 * The fetching and unpacking are skopeo's and umoci's, confined (the import
 * rules of threat-model.md) by a child `nsrun pull [OPTIONS] docker://REF
 * NAME` (image_fetch.h), run with a clean environment.  The child writes
 * progress events on its stdout (NSRUN_IMAGE_PROGRESS=1, see image_fetch.h);
 * they become Docker's steps:
 * "Pulling from REPO", per layer "Pulling fs layer", "Downloading" (then again
 * with its bytes so far, as skopeo writes them: image_fetch.h's "bytes"),
 * "Download complete", "Extracting", "Pull complete", then "Digest: sha256:..."
 * and "Status: Downloaded newer image for REF" (docs/images.md says which are
 * live).
 */
#ifndef NSRUN_IMAGE_PULL_H
#define NSRUN_IMAGE_PULL_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "image_ref.h"

/* One line of Docker's pull stream: {"status": status, "id": id} (id "" for none),
 * with "progressDetail": {"current", "total"} when detail (a layer's bytes
 * written so far, of its size by the manifest, 0: unknown). */
struct image_pull_step {
	char status[IMAGE_REF_MAX + 48];
	char id[160];
	bool detail;
	unsigned long long current, total;
};

/* A pull under way.  All fields are the module's. */
struct image_pull {
	pid_t pid;               /* the tool, 0 once reaped */
	int events_fd;           /* its progress events, -1 at their end */
	int out_fd;              /* its stderr when captured, else -1 */
	bool finished;
	int client_fd;           /* -1, or a socket whose hang-up ends the pull (the caller's to set) */
	struct image_ref ref;
	char line[256];          /* an event line being read */
	size_t line_len;
	bool line_long;          /* the line is past line[]: dropped */
	char tail[4096];         /* the end of the tool's stderr */
	size_t tail_len;
	char why[1024];          /* on failure: the tool's last error line */
	char digest[80];
	char (*layers)[13];      /* the short ids of the layers, in order */
	size_t n_layers;
	struct image_pull_step *q; /* steps not yet taken */
	size_t q_head, q_len, q_cap;
};

/* `nsrun pull [-q] REF` (argv[0] is "pull").  Prints errors as main does.
 * Returns the exit status. */
int image_pull_main(int argc, char **argv);

/* Starts the pull of ref into the store under its store name (image_ref.h),
 * replacing an older pull of it: self (the path of this nsrun) run as
 * `nsrun pull --force --quiet docker://REF NAME`.  capture: keep the tool's stderr
 * (its error line goes into the failure's p->why), else it is ours.  Returns
 * 0, or -1 with err (then nothing runs). */
int image_pull_start(struct image_pull *p, const char *self, const struct image_ref *ref, bool capture,
		     struct nsrun_error *err);

/* Waits for the pull's next step (blocks, poll(2)).  Returns 1 with *step, 0
 * when the pull has succeeded and every step was taken, or -1 with err (errnum
 * 0: the pull failed, p->why saying why when captured; ECONNRESET: client_fd
 * hung up, then image_pull_close stops the tool). */
int image_pull_next(struct image_pull *p, struct image_pull_step *step, struct nsrun_error *err);

/* Ends the pull: a child still running is sent SIGTERM (it removes its
 * partial image) and reaped; the fds are closed.  Safe after a failed start. */
void image_pull_close(struct image_pull *p);

#endif
