/* image_fetch_progress.c - what a pull says while it runs (see image_fetch.h):
 * its messages on stderr and its progress events (NSRUN_IMAGE_PROGRESS=1),
 * the layers' bytes read from what skopeo copy writes.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "image_fetch.h"
#include "sys.h"

void fetch_info(const struct fetch *f, const char *fmt, ...)
{
	va_list ap;

	if (f->o->quiet)
		return;
	va_start(ap, fmt);
	fputs("nsrun: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void fetch_event(struct fetch *f, const char *what, const char *arg)
{
	char line[128];
	int n;

	if (f->progress_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%s%s%s\n", what, arg ? " " : "", arg ? arg : "");
	if (n > 0 && (size_t)n < sizeof(line) && write_all(f->progress_fd, line, (size_t)n) < 0) {
		close(f->progress_fd); /* nsrun, reading the progress, is gone: the pull goes on */
		f->progress_fd = -1;
	}
}

/* Says blob i's count of bytes (the "bytes" event). */
static void progress_bytes(struct fetch *f, size_t i, uint64_t current, uint64_t total)
{
	char arg[128];

	f->p_current[i] = current;
	snprintf(arg, sizeof(arg), "%s %llu %llu", f->p_blobs[i], (unsigned long long)current,
		 (unsigned long long)total);
	fetch_event(f, "bytes", arg);
}

/* The size of skopeo's one blob being written, or -1: skopeo (containers/image's
 * oci layout) writes a blob to a temporary file "oci-put-blob*" in the layout's
 * top directory and renames it into blobs/ once whole; none, or more than one
 * (blobs copied at once: whose is whose is not known), gives -1. */
static off_t writing_size(const char *layout)
{
	_cleanup_closedir_ DIR *d = opendir(layout);
	struct dirent *e;
	struct stat st;
	off_t size = -1;
	int n = 0;

	while (d && (e = readdir(d)))
		if (strncmp(e->d_name, "oci-put-blob", 12) == 0 && n++ == 0 &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			size = st.st_size;
	return n == 1 ? size : -1;
}

void fetch_progress_blobs(struct fetch *f)
{
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX];
	size_t in_flight = 0, last = 0;
	struct stat st;
	off_t size;

	if (read_file(f->p_out, 1 << 20, &text, NULL) == 0) {
		for (char *l = text, *nl; l && *l; l = nl) {
			if ((nl = strchr(l, '\n')))
				*nl++ = '\0';
			/* only lines of exactly this form: the file is the sandboxed tool's */
			if (strncmp(l, "Copying blob sha256:", 20) != 0 || strlen(l) != 13 + 71 ||
			    strspn(l + 20, "0123456789abcdef") != 64)
				continue;
			size_t i;
			for (i = 0; i < f->p_n && strcmp(f->p_blobs[i], l + 13) != 0; i++)
				;
			if (i < f->p_n)
				continue;
			char(*b)[72] = realloc(f->p_blobs, (f->p_n + 1) * sizeof(*b));
			unsigned char *s = b ? realloc(f->p_state, f->p_n + 1) : NULL;
			uint64_t *t = s ? realloc(f->p_total, (f->p_n + 1) * sizeof(*t)) : NULL;
			uint64_t *c = t ? realloc(f->p_current, (f->p_n + 1) * sizeof(*c)) : NULL;
			if (b)
				f->p_blobs = b;
			if (s)
				f->p_state = s;
			if (t)
				f->p_total = t;
			if (!c)
				break;
			f->p_current = c;
			snprintf(f->p_blobs[f->p_n], sizeof(f->p_blobs[0]), "%s", l + 13);
			f->p_state[f->p_n] = 1;
			f->p_total[f->p_n] = fetch_manifest_layer_size(f->p_manifest, l + 13);
			f->p_current[f->p_n++] = 0;
			fetch_event(f, "blob", l + 13);
		}
	}
	for (size_t i = 0; i < f->p_n; i++) {
		if (f->p_state[i] != 1)
			continue;
		snprintf(path, sizeof(path), "%s/blobs/sha256/%s", f->p_layout, f->p_blobs[i] + 7);
		if (stat(path, &st) == 0) {
			/* whole: its file's size (skopeo checked its digest) */
			progress_bytes(f, i, (uint64_t)st.st_size, f->p_total[i] ? f->p_total[i] : (uint64_t)st.st_size);
			f->p_state[i] = 2;
			fetch_event(f, "fetched", f->p_blobs[i]);
		} else {
			in_flight++;
			last = i;
		}
	}
	/* one blob under way and one file being written: that file is its (a blob
	 * that ended meanwhile, another begun, is found whole again: not counted) */
	if (in_flight == 1 && (size = writing_size(f->p_layout)) >= 0) {
		snprintf(path, sizeof(path), "%s/blobs/sha256/%s", f->p_layout, f->p_blobs[last] + 7);
		if (stat(path, &st) < 0 && (uint64_t)size > f->p_current[last] &&
		    (!f->p_total[last] || (uint64_t)size <= f->p_total[last]))
			progress_bytes(f, last, (uint64_t)size, f->p_total[last]);
	}
}
