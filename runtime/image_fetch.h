/* image_fetch.h - the pull itself: an image fetched from a registry by skopeo,
 * unpacked by umoci, each confined as rootfs-tools/nsrun-image confined them
 * (bwrap: a user namespace of the caller's id, or 65534 as root; no
 * capabilities; read-only /usr; the work directory the only writable place;
 * the network only for skopeo), its tree bounded (bytes, files, time, a
 * registry's stall), finished (image_finish.c) and renamed into the store.
 *
 * `nsrun pull [OPTIONS] docker://REF NAME` runs it (image_pull.c starts it for
 * `nsrun pull REF` and the API; rootfs-tools/nsrun-image pull calls it).  Its
 * progress events, one a line on stdout when NSRUN_IMAGE_PROGRESS=1, are the
 * ones image_pull.c parses: "digest sha256:HEX", "blob sha256:HEX", "bytes
 * sha256:HEX CURRENT TOTAL" (bytes of the layer written so far, of its size by
 * the manifest, 0: unknown), "fetched sha256:HEX", "unpack", "unpacked".  Messages: `nsrun: pull "NAME": ...`.
 * Exit status (nsrun-image's): 0, 1 the pull failed, 2 a usage error, 128+N
 * stopped by signal N (nothing of the pull is left but a temporary directory
 * a SIGKILL leaves, which the next pull of NAME removes).
 */
#ifndef NSRUN_IMAGE_FETCH_H
#define NSRUN_IMAGE_FETCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <yajl/yajl_tree.h>

#include "error.h"
#include "util.h"

#define FETCH_UNPACK_UID 65534 /* who a root pull unpacks as (nsrun's mapped id) */

/* The options of one pull (nsrun-image pull's). */
struct fetch_opts {
	const char *ref;      /* docker://... */
	const char *name;     /* the store entry */
	const char *store;    /* --store, or NULL */
	const char *tls;      /* "true", "false" or NULL */
	struct strv interp;   /* --interpreter, split at ',' */
	struct strv env_add;  /* --env KEY=VALUE */
	uint64_t max_bytes, max_files, timeout_s, net_timeout_s;
	bool force, quiet;
};

/* A pull under way: the bounds, the directories, the child running. */
struct fetch {
	const struct fetch_opts *o;
	char *tmp;            /* STORE/.NAME.tmp.XXXXXX */
	char *work;           /* tmp/work: the sandbox's /build */
	int work_fd;          /* open on work while tools run, else -1 */
	const char *reach;    /* as root: where work is bound for the sandbox, or NULL */
	pid_t child;          /* the confined tool, 0 for none */
	uint64_t deadline_us; /* monotonic_us() at which --timeout is past */
	char reason[256];     /* the bound that stopped a step, "" for none */
	char hint[512];       /* the hint of nsrun image check's refusal */
	int progress_fd;      /* NSRUN_IMAGE_PROGRESS's events, -1 for none */
	/* skopeo copy's progress: its output file, the layout, the blobs seen */
	const char *p_out, *p_layout;
	const char *p_manifest;  /* the raw manifest: the layers' sizes */
	char (*p_blobs)[72];
	unsigned char *p_state; /* 1 announced, 2 fetched */
	uint64_t *p_total;      /* each blob's size by the manifest, 0: unknown */
	uint64_t *p_current;    /* its bytes written so far, as last said */
	size_t p_n;
};

/* The signal (HUP, INT, TERM, PIPE) that asked the pull to stop since
 * image_fetch_main installed its handlers, or 0. */
int fetch_stop_signal(void);

/* `nsrun pull [OPTIONS] SOURCE NAME` (argv[0] "pull"): parses the options and
 * pulls.  Returns the exit status above. */
int image_fetch_main(int argc, char **argv);

/* Runs argv confined (image_confine.c): net: the host's network (a registry,
 * also on loopback) and the caller's credentials and registries.conf, else an
 * empty network; in_fd, out_fd, log_fd its stdio.  Polls the bounds every
 * second; a bound exceeded kills it and sets f->reason.  When the sandbox
 * itself fails (setpriv, prlimit or bwrap, before the tool runs), f->reason
 * says so with their first message and f->hint what to check.  Returns its status
 * (128+N when killed by signal N), or -1 with err when it could not start. */
int fetch_run_confined(struct fetch *f, bool net, int in_fd, int out_fd, int log_fd, const char *const *argv,
		       struct nsrun_error *err);

/* Kills the confined tool (f->child: setpriv, exec'd into bwrap; SIGKILL) and
 * every process its sandbox still holds (bwrap's pid 1, reparented to the pull,
 * a PR_SET_CHILD_SUBREAPER, prctl(2), when bwrap dies: killed, and reaped once
 * its pid namespace is empty, pid_namespaces(7)), then reaps them; f->child
 * becomes 0.  After it nothing writes into f->work.  Never fails. */
void fetch_kill_sandbox(struct fetch *f);

/* As root: makes f->work reachable by path for uid 65534 whatever the store's
 * parents' modes (bwrap re-resolves its --bind-fd source by path, as the
 * sandbox's uid).  Enters a mount namespace of our own (unshare(2)
 * CLONE_NEWNS, slave to the host's: nothing mounted here is seen outside, and
 * it ends with the process), binds f->work onto an existing directory every
 * user may traverse (/dev/shm, else /mnt) and moves f->work_fd onto that
 * mount.  Without CAP_SYS_ADMIN (or no such directory) changes nothing: the
 * store's own path is used.  Returns 0 or -1 with err (mount(2)'s errno). */
int fetch_reach_work(struct fetch *f, struct nsrun_error *err);

/* Undoes fetch_reach_work's bind (umount2(2) MNT_DETACH); no-op without one. */
void fetch_unreach_work(struct fetch *f);

/* The caller's containers-registries.conf(5): $CONTAINERS_REGISTRIES_CONF,
 * else $XDG_CONFIG_HOME (or ~/.config)/containers/registries.conf, if it is a
 * readable file.  Returns a malloc'd path or NULL. */
char *fetch_registries_conf(void);

/* "8.0M", "200M", as numfmt --to=iec writes bytes. */
void fetch_iec(uint64_t bytes, char *buf, size_t len);

/* Writes the progress event "what[ arg]" (nothing without a progress fd;
 * image_fetch_progress.c, as the next two). */
void fetch_event(struct fetch *f, const char *what, const char *arg);

/* During skopeo copy: its "Copying blob DIGEST" lines in f->p_out announce
 * a layer ("blob"); the blob's file in the layout f->p_layout says it is
 * fetched ("fetched": skopeo renames a blob into place once verified). */
void fetch_progress_blobs(struct fetch *f);

/* "nsrun: " and the message on stderr, unless --quiet. */
void fetch_info(const struct fetch *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Is a tree moved aside (.NAME.old.XXXXXX) still the root of a run?  (A run
 * holds a shared flock(2) on its rootfs; older runs are found by their
 * mounts.) */
bool fetch_tree_in_use(const char *dir);

/* Removes the leftovers of interrupted pulls, builds and removals of the name
 * in store (STORE/.NAME.tmp.XXXXXX not locked by a pull in progress,
 * STORE/.NAME.old.XXXXXX no run uses). */
void fetch_remove_stale(const struct fetch *f, const char *store);

/* Takes STORE/.lock/NAME (the file is kept), waiting up to --timeout for
 * another pull or build of the name.  Returns the locked fd, or -1 with err. */
int fetch_lock_name(const struct fetch *f, const char *store, struct nsrun_error *err);

/* Moves the finished f->tmp to STORE/NAME (f->tmp becomes NULL); an image it
 * replaces (--force) is renamed aside first and deleted unless a run still
 * uses it.  Returns 0 or -1 with err. */
int fetch_land(struct fetch *f, const char *store, struct nsrun_error *err);

/* Makes the unpacked tree at rootfs safe to share (image_finish.c): FIFOs,
 * sockets and devices deleted, xattrs but user.* removed, set-id, sticky and
 * group/other-write bits cleared, files readable by all but secrets, as root
 * all root's; then /dev emptied and the runtime's mount points made.  Links
 * are never followed.  Returns 0, 1 with f->reason when a bound (files,
 * bytes) is exceeded, or -1 with err. */
int fetch_finish_tree(struct fetch *f, const char *rootfs, struct nsrun_error *err);

/* Counts the entries and apparent bytes under dir (one file system, links not
 * followed). */
void fetch_tree_usage(const char *dir, uint64_t *files, uint64_t *bytes);

/* lchown(2)s every entry under dir (itself too) to uid:gid, links not
 * followed.  Returns 0 or -1 with errno. */
int fetch_chown_tree(const char *dir, uid_t uid, gid_t gid);

/* Deletes the tree at path (one file system; directories without write
 * permission of our own are opened up first).  Returns 0 (also when it does
 * not exist) or -1 with errno. */
int fetch_remove_tree(const char *path);

/* The image configuration of the layout at f->work/oci: index -> manifest
 * (the one tagged "nsrun") -> config.  mdigest gets the manifest's digest
 * (len bytes).  Returns the config (a JSON object; yajl_tree_free it), or NULL
 * with err. */
yajl_val fetch_read_config(struct fetch *f, char *mdigest, size_t len, struct nsrun_error *err);

/* The sha256 of the file at path as "sha256:HEX" into out (72 bytes).
 * Returns 0 or -1 with errno. */
int fetch_file_digest(const char *path, char *out);

/* The size in bytes of the layer digest ("sha256:HEX") as the image manifest
 * at the path manifest (raw, as skopeo inspect --raw wrote it) declares it
 * (layers[].size, OCI image-spec manifest.md); 0 when it is not there (an index,
 * not JSON, not listed). */
uint64_t fetch_manifest_layer_size(const char *manifest, const char *digest);

/* Writes dir/image.json from the image's configuration cfg_text (the OCI
 * config) for the interpreter interp (may be empty): the image's env (PATH
 * added without one, PYTHONDONTWRITEBYTECODE=1 for a python interpreter,
 * --env entries replacing the image's), WorkingDir (not absolute: "/"),
 * Entrypoint, Cmd, User, ExposedPorts, Volumes, the source and created
 * (SOURCE_DATE_EPOCH, else now).  Returns 0 or -1 with err. */
int fetch_write_image_json(const struct fetch_opts *o, const char *dir, yajl_val cfg, const struct strv *interp,
			   const char *digest, const char *manifest, struct nsrun_error *err);

#endif
