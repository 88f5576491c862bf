/* seccomp_cache.c - on-disk cache of compiled seccomp BPF programs.
 *
 * File layout: struct cache_header, then n_insns struct sock_filter, then
 * warnings_len bytes of warning text.  body_sha256 is the SHA-256 of the header
 * (with body_sha256 zeroed) followed by the body, so a torn or edited file is
 * a miss.  The key is inside the header as well as in the file name.  The
 * checksum is not a signature: the directory is the user's own (we check owner
 * and mode), and whoever can write there already runs code as the user.
 */
#include "seccomp_cache.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nettle/base16.h>

#include "cleanup.h"

#define CACHE_MAGIC "NSRUNBPF"
#define CACHE_MAX_WARNINGS (64u << 10)

struct cache_header {
	char magic[8];
	uint32_t format;
	uint32_t n_insns;
	uint32_t warnings_len;
	uint32_t n_skipped_safe;
	uint32_t n_holes;
	uint32_t reserved;
	uint8_t key[SHA256_DIGEST_SIZE];
	uint8_t body_sha256[SHA256_DIGEST_SIZE];
};

struct build_id {
	const uint8_t *id;
	size_t len;
};

/* dl_iterate_phdr callback: the NT_GNU_BUILD_ID note of the first object (the
 * program itself). */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	struct build_id *b = data;

	(void)size;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*n);
			const char *desc = name + ((n->n_namesz + 3) & ~3u);

			if (desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
			    n->n_descsz > 0) {
				b->id = (const uint8_t *)desc;
				b->len = n->n_descsz;
				return 1;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 1;  /* only the program, not the libraries after it */
}

bool seccomp_cache_build_id(const uint8_t **id, size_t *len)
{
	struct build_id b = { NULL, 0 };

	dl_iterate_phdr(find_build_id, &b);
	*id = b.id;
	*len = b.len;
	return b.id != NULL;
}

bool seccomp_cache_enabled(void)
{
	const char *v = getenv("NSRUN_SECCOMP_CACHE");

	return !(v && strcmp(v, "0") == 0);
}

/* A directory we own and only we can write to. */
static bool dir_is_private(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

int seccomp_cache_dir_path(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	/* The XDG spec says relative values are to be ignored. */
	if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/nsrun", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache/nsrun", home);
	else
		return -1;
	return n > 0 && (size_t)n < len ? 0 : -1;
}

/* Opens the cache directory, creating both levels (0700) when create is set.
 * Returns a directory fd or -1. */
static int cache_dir_open(bool create)
{
	_cleanup_close_ int base_fd = -1;
	int fd;
	char dir[PATH_MAX], *slash;

	if (seccomp_cache_dir_path(dir, sizeof(dir)) < 0)
		return -1;
	slash = strrchr(dir, '/');
	*slash = '\0';
	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	base_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (base_fd < 0)
		return -1;
	if (create && mkdirat(base_fd, "nsrun", 0700) < 0 && errno != EEXIST)
		return -1;
	fd = openat(base_fd, "nsrun", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && !dir_is_private(fd)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void entry_name(const uint8_t key[SHA256_DIGEST_SIZE], char *buf, size_t len)
{
	char hex[BASE16_ENCODE_LENGTH(SHA256_DIGEST_SIZE) + 1];

	base16_encode_update(hex, SHA256_DIGEST_SIZE, key);
	hex[sizeof(hex) - 1] = '\0';
	snprintf(buf, len, "seccomp-%s.bpf", hex);
}

static void body_digest(const struct cache_header *h, const void *body, size_t body_len,
                        uint8_t out[SHA256_DIGEST_SIZE])
{
	struct cache_header copy = *h;
	struct sha256_ctx s;

	memset(copy.body_sha256, 0, sizeof(copy.body_sha256));
	sha256_init(&s);
	sha256_update(&s, sizeof(copy), (const uint8_t *)&copy);
	sha256_update(&s, body_len, body);
	sha256_digest(&s, SHA256_DIGEST_SIZE, out);
}

/* Reads the whole entry file (bounded) into *data. Returns its size or -1. */
static ssize_t read_entry(int dfd, const char *name, char **data)
{
	const size_t max = sizeof(struct cache_header) + BPF_MAXINSNS * sizeof(struct sock_filter) +
	                   CACHE_MAX_WARNINGS;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t got = 0;

	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) || st.st_size < (off_t)sizeof(struct cache_header) ||
	    (size_t)st.st_size > max)
		return -1;
	buf = malloc((size_t)st.st_size);
	if (!buf)
		return -1;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	*data = steal_ptr(&buf);
	return (ssize_t)got;
}

/* Checks the header against the key and the data, returns the header or NULL. */
static const struct cache_header *validate(const char *data, size_t size,
                                           const uint8_t key[SHA256_DIGEST_SIZE])
{
	const struct cache_header *h = (const struct cache_header *)data;
	uint8_t digest[SHA256_DIGEST_SIZE];
	size_t body;

	if (memcmp(h->magic, CACHE_MAGIC, sizeof(h->magic)) != 0 || h->format != SECCOMP_CACHE_FORMAT ||
	    memcmp(h->key, key, SHA256_DIGEST_SIZE) != 0 || h->n_insns == 0 ||
	    h->n_insns > BPF_MAXINSNS || h->warnings_len > CACHE_MAX_WARNINGS)
		return NULL;
	body = (size_t)h->n_insns * sizeof(struct sock_filter) + h->warnings_len;
	if (size != sizeof(*h) + body)
		return NULL;
	body_digest(h, data + sizeof(*h), body, digest);
	if (memcmp(digest, h->body_sha256, sizeof(digest)) != 0)
		return NULL;
	if (memchr(data + size - h->warnings_len, '\0', h->warnings_len))
		return NULL;
	return h;
}

bool seccomp_cache_load(const uint8_t key[SHA256_DIGEST_SIZE], struct seccomp_cache_entry *e)
{
	_cleanup_close_ int dfd = -1;
	_cleanup_free_ char *data = NULL;
	const struct cache_header *h;
	char name[96];
	ssize_t size;
	size_t insn_bytes;

	dfd = cache_dir_open(false);
	if (dfd < 0)
		return false;
	entry_name(key, name, sizeof(name));
	size = read_entry(dfd, name, &data);
	if (size < 0 || !(h = validate(data, (size_t)size, key)))
		return false;
	memset(e, 0, sizeof(*e));
	insn_bytes = (size_t)h->n_insns * sizeof(struct sock_filter);
	e->insns = malloc(insn_bytes);
	if (!e->insns)
		return false;
	memcpy(e->insns, data + sizeof(*h), insn_bytes);
	e->n_insns = h->n_insns;
	e->n_skipped_safe = h->n_skipped_safe;
	e->n_holes = h->n_holes;
	if (h->warnings_len > 0) {
		e->warnings = strndup(data + sizeof(*h) + insn_bytes, h->warnings_len);
		if (!e->warnings) {
			seccomp_cache_entry_clear(e);
			return false;
		}
	}
	return true;
}

static bool write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* Header and body of *e in one buffer, ready to write. */
static char *serialise(const uint8_t key[SHA256_DIGEST_SIZE], const struct seccomp_cache_entry *e,
                       size_t *len)
{
	size_t insn_bytes = (size_t)e->n_insns * sizeof(struct sock_filter);
	size_t wlen = e->warnings ? strlen(e->warnings) : 0;
	struct cache_header h;
	char *buf;

	if (e->n_insns == 0 || e->n_insns > BPF_MAXINSNS || wlen > CACHE_MAX_WARNINGS)
		return NULL;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CACHE_MAGIC, sizeof(h.magic));
	h.format = SECCOMP_CACHE_FORMAT;
	h.n_insns = e->n_insns;
	h.warnings_len = (uint32_t)wlen;
	h.n_skipped_safe = e->n_skipped_safe;
	h.n_holes = e->n_holes;
	memcpy(h.key, key, SHA256_DIGEST_SIZE);
	*len = sizeof(h) + insn_bytes + wlen;
	buf = malloc(*len);
	if (!buf)
		return NULL;
	memcpy(buf + sizeof(h), e->insns, insn_bytes);
	if (wlen)
		memcpy(buf + sizeof(h) + insn_bytes, e->warnings, wlen);
	body_digest(&h, buf + sizeof(h), insn_bytes + wlen, h.body_sha256);
	memcpy(buf, &h, sizeof(h));
	return buf;
}

struct aged {
	struct timespec mtime;
	char name[96];
};

static int older_first(const void *a, const void *b)
{
	const struct aged *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Keeps the directory dfd to the SECCOMP_CACHE_MAX_ENTRIES entries stored last
 * (by mtime: a hit does not touch its file), and removes temporary files older
 * than SECCOMP_CACHE_STALE_TMP_S (a writer that died).  Each nsrun build and
 * profile makes entries of its own; without this they would pile up for ever.
 * Best effort, as everything here. */
static void prune(int dfd)
{
	_cleanup_free_ struct aged *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd = dup(dfd);

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		bool entry = strncmp(de->d_name, "seccomp-", 8) == 0 && len > 12 &&
			     strcmp(de->d_name + len - 4, ".bpf") == 0;
		bool tmp = strncmp(de->d_name, ".seccomp-", 9) == 0 && len > 4 &&
			   strcmp(de->d_name + len - 4, ".tmp") == 0;

		if ((!entry && !tmp) || len >= sizeof(v->name) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (tmp) {
			if (st.st_mtime + SECCOMP_CACHE_STALE_TMP_S < time(NULL))
				unlinkat(dfd, de->d_name, 0);
			continue;
		}
		if (n == cap) {
			struct aged *w = reallocarray(v, cap ? 2 * cap : 64, sizeof(*v));
			if (!w)
				break;
			v = w;
			cap = cap ? 2 * cap : 64;
		}
		v[n].mtime = st.st_mtim;
		memcpy(v[n].name, de->d_name, len + 1);
		n++;
	}
	closedir(d);
	if (n <= SECCOMP_CACHE_MAX_ENTRIES)
		return;
	qsort(v, n, sizeof(*v), older_first);
	for (size_t i = 0; i < n - SECCOMP_CACHE_MAX_ENTRIES; i++)
		unlinkat(dfd, v[i].name, 0);
}

bool seccomp_cache_store(const uint8_t key[SHA256_DIGEST_SIZE], const struct seccomp_cache_entry *e)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	_cleanup_free_ char *buf = NULL;
	char name[96], tmp[128];
	size_t len;
	bool ok;

	buf = serialise(key, e, &len);
	if (!buf || (dfd = cache_dir_open(true)) < 0)
		return false;
	entry_name(key, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name, (long)getpid());
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* Left behind by a dead process that had our pid. */
		unlinkat(dfd, tmp, 0);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	}
	if (fd < 0)
		return false;
	ok = write_all(fd, buf, len) && close(steal_fd(&fd)) == 0 &&
	     renameat(dfd, tmp, dfd, name) == 0;
	if (!ok)
		unlinkat(dfd, tmp, 0);
	else
		prune(dfd);
	return ok;
}

void seccomp_cache_entry_clear(struct seccomp_cache_entry *e)
{
	free(e->insns);
	free(e->warnings);
	memset(e, 0, sizeof(*e));
}
