/* fuzz_api_create.c - fuzzes the body of `nsrun api`'s POST /containers/create
 * (runtime/api_create.c api_create_config): a request is outside input, sent by any
 * program that can reach the socket.  A refusal must carry an HTTP status of 400 to
 * 501 and a one-line message; an accepted one a config.json that parses, whose
 * options end in "--" and a command, and whose binds are under the volume root. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char store[] = "/tmp/nsrun-fuzz-store.XXXXXX";

static void remove_store(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/fuzz/image.json", store);
	unlink(path);
	snprintf(path, sizeof(path), "%s/fuzz", store);
	rmdir(path);
	rmdir(store);
}

/* A store holding the image "fuzz", so that requests get past the image lookup
 * (removed at exit). */
static void make_store(void)
{
	static int done;
	char *dir = store;
	char path[128];
	FILE *f;

	if (done++)
		return;
	if (!mkdtemp(dir))
		abort();
	atexit(remove_store);
	snprintf(path, sizeof(path), "%s/fuzz", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/fuzz/image.json", dir);
	if (!(f = fopen(path, "we")))
		abort();
	fputs("{}", f);
	fclose(f);
	setenv("NSRUN_IMAGES", dir, 1);
}

static void check_accepted(const char *doc, size_t len)
{
	char msg[256];
	yajl_val v = api_parse(doc, len, msg, sizeof(msg));
	yajl_val args = api_get(v, "args", yajl_t_array);
	bool dashdash = false;

	if (!v)
		abort();
	/* Testcontainers' reaper runs nothing in a container (api_ryuk.c): no run's arguments */
	const char *image = api_str(api_get(v, "image", yajl_t_string));
	if (image && strcmp(image, "testcontainers/ryuk") == 0) {
		yajl_tree_free(v);
		return;
	}
	if (!args || args->u.array.len < 2)
		abort();
	for (size_t i = 0; i < args->u.array.len; i++) {
		const char *a = api_str(args->u.array.values[i]);
		if (strcmp(a, "--") == 0 && !dashdash) {
			dashdash = true;
			if (i + 1 >= args->u.array.len)
				abort();
		}
		if (!dashdash && strcmp(a, "-v") == 0) {
			const char *src = i + 1 < args->u.array.len ? api_str(args->u.array.values[i + 1]) : "";
			if (strncmp(src, "/tmp", 4) != 0 || (src[4] != '/' && src[4] != ':'))
				abort();
		}
	}
	if (!dashdash)
		abort();
	yajl_tree_free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct api_server srv;
	char msg[1024], id[API_ID_LEN + 1];
	unsigned status = 0;
	size_t len = 0;
	char *doc;

	if (size > (1 << 20))
		return 0;
	make_store();
	if (!srv.volume_roots.n)
		strv_push(&srv.volume_roots, "/tmp");
	memset(id, 'a', API_ID_LEN);
	id[API_ID_LEN] = '\0';
	doc = api_create_config(&srv, (const char *)data, size, "fuzz", id, &len, &status, msg, sizeof(msg));
	if (doc) {
		check_accepted(doc, len);
		free(doc);
	} else if (status < 400 || status > 501 || !msg[0] || strchr(msg, '\n')) {
		abort();
	}
	return 0;
}

#include "replay.h"
