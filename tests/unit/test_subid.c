/* Unit tests of --userns subids' parsing (subid.c, caps.c): the subuid(5) line of
 * a user by name or by uid, the first one only; --cap-add takes Docker's default
 * set and nothing beyond it; the exec spec keeps userns and capabilities. */
#include <stdlib.h>
#include <string.h>

#include "caps.h"
#include "config.h"
#include "exec_spec.h"
#include "subid.h"
#include "tap.h"

static void find(struct tap *t)
{
	const char *text = "alice:100000:65536\nbob:165536:65536\n1003:231072:1000\nalice:300000:10\n"
			   "broken:x:1\nzero:5:0\n";
	struct subid_range r = { 0, 0 };

	tap_int(t, "alice by name: found", 1, subid_find(text, "alice", 1001, &r));
	tap_int(t, "  ... her first range's start", 100000, (long long)r.start);
	tap_int(t, "  ... and count", 65536, (long long)r.count);
	tap_int(t, "bob: found", 1, subid_find(text, "bob", 1002, &r));
	tap_int(t, "  ... start", 165536, (long long)r.start);
	tap_int(t, "a user without a name there, by uid 1003", 1, subid_find(text, "carol", 1003, &r));
	tap_int(t, "  ... start", 231072, (long long)r.start);
	tap_int(t, "no entry: none", 0, subid_find(text, "dave", 1004, &r));
	tap_int(t, "a prefix of a name is not the name", 0, subid_find(text, "ali", 1005, &r));
	tap_int(t, "a line that does not parse: none", 0, subid_find(text, "broken", 1006, &r));
	tap_int(t, "a count of 0: none", 0, subid_find(text, "zero", 1007, &r));
	tap_int(t, "an empty file: none", 0, subid_find("", "alice", 1001, &r));
	tap_int(t, "no newline at the end", 1, subid_find("eve:500000:2000", "eve", 1008, &r));
	tap_int(t, "  ... count", 2000, (long long)r.count);
	/* digits only: sscanf's %lu took a sign or spaces ("-1" as ULONG_MAX) */
	tap_int(t, "a negative start: none", 0, subid_find("m:-1:65536\n", "m", 1, &r));
	tap_int(t, "a plus sign: none", 0, subid_find("m:+5:65536\n", "m", 1, &r));
	tap_int(t, "a leading space: none", 0, subid_find("m: 5:65536\n", "m", 1, &r));
	tap_int(t, "a negative count: none", 0, subid_find("m:5:-1\n", "m", 1, &r));
	tap_int(t, "trailing junk: none", 0, subid_find("m:5:1000x\n", "m", 1, &r));
	tap_int(t, "past ULONG_MAX: none", 0, subid_find("m:99999999999999999999999:1000\n", "m", 1, &r));
	tap_int(t, "control: digits parse", 1, subid_find("m:5:1000\n", "m", 1, &r));
}

static void taken(struct tap *t)
{
	const char *text = "root:200000:65536\nalice:100000:65536\n1003:265536:10\n";
	struct subid_range r = { 200000, 65536 };
	char who[128] = "";

	tap_int(t, "root's own entry is not another's: free", 0, subid_taken(text, "root", 0, &r, who, sizeof(who)));
	r.start = 150000;
	tap_int(t, "a range into alice's: taken", 1, subid_taken(text, "root", 0, &r, who, sizeof(who)));
	tap_str(t, "  ... says whose", "alice's range 100000-165535", who);
	r.start = 265000;
	tap_int(t, "a range into uid 1003's (by number): taken", 1, subid_taken(text, "root", 0, &r, who, sizeof(who)));
	r.start = 165536;
	r.count = 34464;
	tap_int(t, "control: the gap between two ranges is free", 0, subid_taken(text, "root", 0, &r, who, sizeof(who)));
}

static void cap_add(struct tap *t)
{
	struct nsrun_error err = { 0 };
	uint64_t m = 0;
	char names[256];

	tap_ok(t, caps_parse_add("chown,CAP_NET_RAW", &m, &err) == 0, "--cap-add chown,CAP_NET_RAW");
	caps_format(m, names, sizeof(names));
	tap_str(t, "  ... both, by Docker's names", "CHOWN,NET_RAW", names);
	m = 0;
	tap_ok(t, caps_parse_add("ALL", &m, &err) == 0, "--cap-add ALL");
	tap_int(t, "  ... is Docker's default set (a80425fb)", 0xa80425fbLL, (long long)m);
	m = 0;
	tap_ok(t, caps_parse_add("NET_RAW,SYS_ADMIN", &m, &err) < 0, "--cap-add SYS_ADMIN: refused");
	tap_ok(t, strstr(err.msg, "\"SYS_ADMIN\"") != NULL, "  ... naming it");
	tap_ok(t, caps_parse_add("sys_ptrace", &m, &err) < 0, "--cap-add sys_ptrace: refused");
	tap_ok(t, caps_parse_add("", &m, &err) == 0 && m == (1ULL << 13), "  ... an empty value adds nothing");
	/* the API's CapDrop: a name the kernel knows, Docker's default or not */
	tap_ok(t, caps_known("SYS_ADMIN") && caps_known("cap_net_raw") && caps_known("Chown"),
	       "caps_known: SYS_ADMIN, cap_net_raw, Chown");
	tap_ok(t, !caps_known("NET_RAWW") && !caps_known("ALL") && !caps_known("") && !caps_known("CAP_") &&
		  !caps_known("12") && !caps_known("CHOWN,KILL"),
	       "  ... not NET_RAWW, ALL, \"\", CAP_, a number, or a list");
}

static void spec(struct tap *t)
{
	struct nsrun_config in, out;
	struct nsrun_error err = { 0 };
	char *text = NULL, *dir = NULL;

	config_init(&in, &err);
	in.process.cwd = strdup("/");
	in.userns = NSRUN_USERNS_SUBIDS;
	in.rootfs_writable = true;
	in.security.cap_add = caps_docker_default();
	tap_ok(t, exec_spec_format(&in, NULL, &text, &err) == 0, "exec spec with --userns subids formats");
	config_init(&out, &err);
	tap_ok(t, text && exec_spec_parse(text, strlen(text), &out, &dir, &err) == 0, "  ... and parses back");
	tap_int(t, "  ... userns", NSRUN_USERNS_SUBIDS, out.userns);
	tap_int(t, "  ... writable root", 1, out.rootfs_writable);
	tap_int(t, "  ... capabilities", (long long)caps_docker_default(), (long long)out.security.cap_add);
	free(text);
	free(dir);
	config_free(&in);
	config_free(&out);
}

int main(void)
{
	struct tap t = { 0 };

	find(&t);
	taken(&t);
	cap_add(&t);
	spec(&t);
	return tap_done(&t);
}
