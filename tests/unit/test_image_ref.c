/* Unit tests of image_ref.c: Docker references parsed by distribution's
 * grammar, normalised as docker does, and mapped one-to-one to store names. */
#include <stdio.h>
#include <string.h>

#include "image_ref.h"
#include "tap.h"

static void good(struct tap *t, const char *in, const char *norm, const char *familiar, const char *store)
{
	struct image_ref r, back;
	struct nsrun_error err = { 0 };
	char buf[600], desc[700];

	snprintf(desc, sizeof(desc), "parse %s", in);
	tap_ok(t, image_ref_parse(in, &r, &err) == 0, desc);
	snprintf(desc, sizeof(desc), "%s normalised", in);
	tap_str(t, desc, norm, image_ref_string(&r, buf, sizeof(buf)) ? buf : "(null)");
	snprintf(desc, sizeof(desc), "%s as docker shows it", in);
	tap_str(t, desc, familiar, image_ref_familiar(&r, buf, sizeof(buf)) ? buf : "(null)");
	snprintf(desc, sizeof(desc), "%s store name", in);
	tap_str(t, desc, store, image_ref_store_name(&r, buf, sizeof(buf), &err) == 0 ? buf : "(null)");
	snprintf(desc, sizeof(desc), "%s store name maps back", in);
	tap_ok(t, image_store_name_ref(store, &back) == 0 && memcmp(&r, &back, sizeof(r)) == 0, desc);
}

static void bad(struct tap *t, const char *in, const char *why)
{
	struct image_ref r;
	struct nsrun_error err = { 0 };
	char want[700], desc[700];

	snprintf(desc, sizeof(desc), "refuse \"%s\"", in);
	tap_ok(t, image_ref_parse(in, &r, &err) < 0 && err.hint != NULL, desc);
	snprintf(want, sizeof(want), "invalid image reference \"%s\": %s", in, why);
	tap_str(t, desc, want, err.msg);
}

int main(void)
{
	struct tap t = { 0 };
	char digest[80], ref[200], norm[200], store[200];

	good(&t, "redis", "docker.io/library/redis:latest", "redis:latest", "docker.io+library+redis=latest");
	good(&t, "redis:7", "docker.io/library/redis:7", "redis:7", "docker.io+library+redis=7");
	good(&t, "library/postgres:16-alpine", "docker.io/library/postgres:16-alpine", "postgres:16-alpine",
	     "docker.io+library+postgres=16-alpine");
	good(&t, "docker.io/library/python:3.12", "docker.io/library/python:3.12", "python:3.12",
	     "docker.io+library+python=3.12");
	good(&t, "index.docker.io/team/tool", "docker.io/team/tool:latest", "team/tool:latest",
	     "docker.io+team+tool=latest");
	good(&t, "localhost/x", "localhost/x:latest", "localhost/x:latest", "localhost+x=latest");
	good(&t, "quay.io/a/b__c.d-e---f:V1_2.3-x", "quay.io/a/b__c.d-e---f:V1_2.3-x", "quay.io/a/b__c.d-e---f:V1_2.3-x",
	     "quay.io+a+b__c.d-e---f=V1_2.3-x");
	good(&t, "[::1]:5000/t", "[::1]:5000/t:latest", "[::1]:5000/t:latest", "[==1]=5000+t=latest");
	memset(digest, 'a', 64);
	digest[64] = '\0';
	snprintf(ref, sizeof(ref), "127.0.0.1:5000/team/tool@sha256:%s", digest);
	snprintf(store, sizeof(store), "127.0.0.1=5000+team+tool@sha256=%s", digest);
	good(&t, ref, ref, ref, store);
	snprintf(ref, sizeof(ref), "redis:7@sha256:%s", digest);
	snprintf(norm, sizeof(norm), "docker.io/library/redis:7@sha256:%s", digest);
	snprintf(store, sizeof(store), "docker.io+library+redis=7@sha256=%s", digest);
	good(&t, ref, norm, ref, store);

	bad(&t, "", "it is empty");
	bad(&t, "Redis", "the repository name must be lower case");
	bad(&t, "redis:", "the tag after ':' is empty");
	bad(&t, "redis:-x", "the tag must start with a letter, digit or '_'");
	bad(&t, "redis:a/b", "the registry's port must be 1 to 5 digits after ':'");
	bad(&t, "redis:a+b", "the tag holds a character other than letters, digits, '_', '.' and '-'");
	bad(&t, "a b", "it holds a space, control or non-ASCII character");
	bad(&t, "redis@sha256:abc", "a sha256 digest is 64 hex digits");
	bad(&t, "redis@md5:abc", "the digest must be sha256:HEX or sha512:HEX (the OCI image spec's)");
	bad(&t, "x//y", "each part of the name must start with a lower-case letter or digit");
	bad(&t, "x/", "the name ends with '/'");
	bad(&t, "-x", "each part of the name must start with a lower-case letter or digit");
	bad(&t, "a..b", "a '.' in the name must stand between letters or digits");
	bad(&t, "a___b", "a separator in the name must stand between letters or digits");
	bad(&t, "-bad.io/x", "each part of the registry's host name must be letters, digits and inner '-'");
	bad(&t, "host.io:99999999/x", "the registry's port must be 1 to 5 digits after ':'");
	bad(&t, "../etc", "each part of the registry's host name must be letters, digits and inner '-'");
	bad(&t, "a/../../etc", "each part of the name must start with a lower-case letter or digit");

	tap_ok(&t, !image_store_name_is_ref("python") && image_store_name_is_ref("docker.io+library+redis=7"),
	       "plain names never look like mapped references");
	{
		struct image_ref r;
		tap_ok(&t, image_store_name_ref("docker.io+redis=7", &r) < 0, "a non-canonical store name is no reference");
	}
	return tap_done(&t);
}
