/* seccomp_cache.h - on-disk cache of compiled seccomp BPF programs.
 *
 * An entry lives in ${XDG_CACHE_HOME:-$HOME/.cache}/nsrun/seccomp-<key hex>.bpf,
 * where the key is a SHA-256 over everything the program depends on (seccomp.c
 * computes it).  Entries are written atomically (temporary file + rename(2)) and
 * checked before use: magic, format version, key, sizes and a SHA-256 of header
 * and body.  Anything odd is a miss.  Cache problems are never errors: the
 * caller just compiles.  Each store prunes the directory to the entries stored
 * last.  NSRUN_SECCOMP_CACHE=0 disables the cache.
 */
#ifndef NSRUN_SECCOMP_CACHE_H
#define NSRUN_SECCOMP_CACHE_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nettle/sha2.h>     /* SHA256_DIGEST_SIZE */

#define SECCOMP_CACHE_FORMAT 2u
/* a store keeps this many entries, the ones stored last (about 7 KB each) */
#define SECCOMP_CACHE_MAX_ENTRIES 64u
/* a temporary file older than this (seconds) is a dead writer's */
#define SECCOMP_CACHE_STALE_TMP_S 3600

struct seccomp_cache_entry {
	struct sock_filter *insns;      /* n_insns classic BPF instructions */
	uint32_t n_insns;
	char *warnings;                 /* lines joined by '\n', NUL-terminated, or NULL */
	uint32_t n_skipped_safe;        /* unknown names that could not open a hole */
	uint32_t n_holes;               /* unknown names in deny rules of a permissive profile */
};

/* The GNU build ID of the running program (ld --build-id: a hash of the
 * linked binary), found with dl_iterate_phdr(3) in its PT_NOTE segments.
 * Returns true with *id, *len pointing into the loaded image, false when the
 * program has none (then nothing is cached). */
bool seccomp_cache_build_id(const uint8_t **id, size_t *len);

/* The cache directory, ${XDG_CACHE_HOME:-$HOME/.cache}/nsrun, into buf (len
 * bytes).  Returns 0, or -1 when neither variable is an absolute path or the
 * path does not fit. */
int seccomp_cache_dir_path(char *buf, size_t len);

/* Whether the cache is enabled (NSRUN_SECCOMP_CACHE is not "0"). */
bool seccomp_cache_enabled(void);

/* Looks the key up.  Returns true and fills *e (the caller owns it; release with
 * seccomp_cache_entry_clear) on a valid hit; false on a miss or any problem. */
bool seccomp_cache_load(const uint8_t key[SHA256_DIGEST_SIZE], struct seccomp_cache_entry *e);

/* Stores *e under key, creating the directory (mode 0700) if needed, then keeps
 * the directory to the SECCOMP_CACHE_MAX_ENTRIES entries stored last and removes
 * dead writers' temporary files.  Returns true when the entry was written. */
bool seccomp_cache_store(const uint8_t key[SHA256_DIGEST_SIZE], const struct seccomp_cache_entry *e);

/* Frees what *e owns and zeroes it. */
void seccomp_cache_entry_clear(struct seccomp_cache_entry *e);

#endif
