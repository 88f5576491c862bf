/* sha256.h - SHA-256 (FIPS 180-4) for cache keys and checksums.
 *
 * None of the libraries nsrun links (glibc, libcap, libseccomp, yajl)
 * exports a SHA-256, so this is a small one of our own.  Not constant-time: it
 * hashes public data only.
 */
#ifndef NSRUN_SHA256_H
#define NSRUN_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_LEN 32

struct sha256 {
	uint32_t h[8];
	uint64_t total_bytes;
	uint8_t block[64];
	size_t used;            /* bytes waiting in block */
};

/* Starts a new hash in *s. */
void sha256_init(struct sha256 *s);

/* Adds len bytes at data. */
void sha256_update(struct sha256 *s, const void *data, size_t len);

/* Writes the 32-byte digest to out; *s must be re-initialised before reuse. */
void sha256_final(struct sha256 *s, uint8_t out[SHA256_DIGEST_LEN]);

/* One-shot digest of len bytes at data into out. */
void sha256_buffer(const void *data, size_t len, uint8_t out[SHA256_DIGEST_LEN]);

/* Lower-case hex of the digest into hex (65 bytes, NUL-terminated). */
void sha256_hex(const uint8_t d[SHA256_DIGEST_LEN], char hex[2 * SHA256_DIGEST_LEN + 1]);

#endif
