/* Unit tests of config.json -> struct nsrun_config (oci_config.c): what is mapped,
 * what is a warning, and that each refusal names its JSON path. */
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "config.h"
#include "oci_config.h"
#include "tap.h"

#define OK(desc, cond) tap_ok(&t, (cond), (desc))

/* A document with rootfs "/" (it exists everywhere) and fields spliced in. */
static int parse(const char *process_extra, const char *top_extra, struct nsrun_config *cfg, struct strv *w,
		 struct nsrun_error *err)
{
	char doc[8192];

	snprintf(doc, sizeof(doc),
		 "{\"ociVersion\": \"1.2.0\", \"root\": {\"path\": \"/\", \"readonly\": true},"
		 " \"process\": {\"args\": [\"sh\", \"-c\", \"true\"], \"cwd\": \"/tmp\"%s}%s}",
		 process_extra, top_extra);
	memset(err, 0, sizeof(*err));
	memset(w, 0, sizeof(*w));
	if (config_init(cfg, err) < 0)
		return -1;
	return oci_config_parse("/", doc, strlen(doc), cfg, w, err);
}

static bool has_warning(const struct strv *w, const char *prefix)
{
	for (size_t i = 0; i < w->n; i++)
		if (strncmp(w->v[i], prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

/* The error of a document with those fields, for comparison with want. */
static void refused(struct tap *t, const char *desc, const char *process_extra, const char *top_extra,
		    const char *want)
{
	struct nsrun_config cfg;
	struct nsrun_error err;
	struct strv w;
	int rc = parse(process_extra, top_extra, &cfg, &w, &err);

	tap_ok(t, rc < 0, desc);
	tap_str(t, "  ... the message", want, err.msg);
	strv_free(&w);
	config_free(&cfg);
}

/* Documents refused, each with its message (refused(), in this order). */
static const struct refusal {
	const char *desc, *process_extra, *top_extra, *want;
} refusals[] = {
	{ "env without =: refused", ", \"env\": [\"A=1\", \"B\"]", "",
	  "config.json: process.env[1]: \"B\": expected KEY=VALUE" },
	{ "a uid past 65534: refused", ", \"user\": {\"uid\": 70000}", "",
	  "config.json: process.user.uid: 70000: nsrun takes ids 0 to 65534" },
	{ "an unknown mount type: refused", "",
	  ", \"mounts\": [{\"destination\": \"/a\", \"type\": \"tmpfs\"}, {\"destination\": \"/b\", \"type\": \"nfs\"}]",
	  "config.json: mounts[1].type: \"nfs\" at /b: not supported (bind, tmpfs, proc, devpts, sysfs, cgroup, "
	  "mqueue)" },
	{ "a mount namespace path: refused, with why", "",
	  ", \"linux\": {\"namespaces\": [{\"type\": \"mount\", \"path\": \"/proc/1/ns/mnt\"}]}",
	  "config.json: linux.namespaces[0].path: joining an existing mount namespace is not supported (nsrun joins "
	  "network, ipc, uts, pid and user only: nsrun builds the container's root in its own)" },
	{ "a user namespace path with uidMappings: refused, with why", "",
	  ", \"linux\": {\"namespaces\": [{\"type\": \"user\", \"path\": \"/proc/1/ns/user\"}], "
	  "\"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}]}",
	  "config.json: linux.uidMappings: given with linux.namespaces' user path: the joined user namespace's maps "
	  "are its maker's (config-linux.md \"User namespace mappings\"); leave them out" },
	{ "a uts namespace path that is not absolute: refused", "",
	  ", \"linux\": {\"namespaces\": [{\"type\": \"uts\", \"path\": \"ns/uts\"}]}",
	  "config.json: linux.namespaces[0].path: expected an absolute path" },
	{ "a network namespace path that is not absolute: refused", "",
	  ", \"linux\": {\"namespaces\": [{\"type\": \"network\", \"path\": \"ns/net\"}]}",
	  "config.json: linux.namespaces[0].path: expected an absolute path" },
	{ "a uid range without a gid map: refused", "",
	  ", \"linux\": {\"uidMappings\": [{\"containerID\": 0, \"hostID\": 100000, \"size\": 65536}]}",
	  "config.json: linux.gidMappings: missing, while linux.uidMappings maps a range: give both" },
	{ "a map of size 0: refused", "",
	  ", \"linux\": {\"uidMappings\": [{\"containerID\": 0, \"hostID\": 100000, \"size\": 0}]}",
	  "config.json: linux.uidMappings[0].size: 0: out of range" },
	{ "an additional gid the map does not hold: refused",
	  ", \"user\": {\"uid\": 0, \"gid\": 0, \"additionalGids\": [5000]}",
	  ", \"linux\": {\"uidMappings\": [{\"containerID\": 0, \"hostID\": 100000, \"size\": 1000}],"
	  " \"gidMappings\": [{\"containerID\": 0, \"hostID\": 100000, \"size\": 1000}]}",
	  "config.json: process.user.additionalGids[0]: gid 5000 is not mapped by linux.gidMappings: setgroups(2) "
	  "cannot give it" },
	{ "a bind under /proc: refused", "",
	  ", \"mounts\": [{\"destination\": \"/proc/sys\", \"type\": \"bind\", \"source\": \"/tmp\"}]",
	  "config.json: mounts[0].destination: /proc/sys: nsrun mounts /proc itself, with its masks" },
	{ "a memory limit that is not a number: refused", "",
	  ", \"linux\": {\"resources\": {\"memory\": {\"limit\": \"1g\"}}}",
	  "config.json: linux.resources.memory.limit: expected an integer" },
	{ "a read-only tmpfs (nsrun cannot give one): refused", "",
	  ", \"mounts\": [{\"destination\": \"/a\", \"type\": \"tmpfs\", \"options\": [\"ro\"]}]",
	  "config.json: mounts[0].options: \"ro\": a read-only tmpfs is not supported by nsrun" },
	{ "oomScoreAdj 1001: refused", ", \"oomScoreAdj\": 1001", "",
	  "config.json: process.oomScoreAdj: 1001: expected -1000 to 1000 (proc(5))" },
	{ "maskedPaths [\"/\"]: refused", "", ", \"linux\": {\"maskedPaths\": [\"/\"]}",
	  "config.json: linux.maskedPaths[0]: \"/\": not a path nsrun can mask (the root is read-only already)" },
	{ "readonlyPaths with \"..\": refused, naming it", "", ", \"linux\": {\"readonlyPaths\": [\"/a/../b\"]}",
	  "config.json: linux.readonlyPaths[0]: \"/a/../b\": \"..\" is not allowed" },
	{ "sysctl kernel.pid_max (no namespace's): refused by name", "",
	  ", \"linux\": {\"sysctl\": {\"kernel.pid_max\": \"9\"}}",
	  "config.json: linux.sysctl: kernel.pid_max: not in a namespace of the container's own (only the IPC "
	  "ones, fs.mqueue.*, net.* and kernel.domainname are; as runc)" },
	{ "sysctl net.* without a network namespace entry (the host's): refused", "",
	  ", \"linux\": {\"namespaces\": [{\"type\": \"ipc\"}], \"sysctl\": {\"net.core.somaxconn\": \"9\"}}",
	  "config.json: linux.sysctl: net.core.somaxconn: linux.namespaces has no network entry (the host's): not "
	  "allowed" },
	{ "sysctl kernel.hostname: refused (the hostname field's)", "",
	  ", \"linux\": {\"namespaces\": [{\"type\": \"uts\"}], \"sysctl\": {\"kernel.hostname\": \"x\"}}",
	  "config.json: linux.sysctl: kernel.hostname: not allowed: the \"hostname\" field sets it (as runc)" },
	{ "sysctl net..x (an empty name, a way up once turned into a path): refused", "",
	  ", \"linux\": {\"namespaces\": [{\"type\": \"network\"}], \"sysctl\": {\"net../x\": \"1\"}}",
	  "config.json: linux.sysctl: \"net../x\": not a sysctl name" },
	{ "rootfsPropagation \"sideways\": refused", "", ", \"linux\": {\"rootfsPropagation\": \"sideways\"}",
	  "config.json: linux.rootfsPropagation: \"sideways\": expected shared, slave, private or unbindable, or "
	  "their r-forms (rshared, ...)" },
	{ "a device whose numbers are not the host node's: refused by name", "",
	  ", \"linux\": {\"devices\": [{\"path\": \"/dev/null\", \"type\": \"c\", \"major\": 1, \"minor\": 5}]}",
	  "config.json: linux.devices[0]: /dev/null: asked for char 1:5, the host's node is char 1:3 (nsrun binds "
	  "the host's: a user namespace cannot make device nodes)" },
	{ "a device outside /dev: refused", "",
	  ", \"linux\": {\"devices\": [{\"path\": \"/etc/null\", \"type\": \"c\", \"major\": 1, \"minor\": 3}]}",
	  "config.json: linux.devices[0].path: \"/etc/null\": nsrun makes nodes only in its /dev (the root is "
	  "read-only; /dev/pts and /dev/shm are their own file systems)" },
};

int main(void)
{
	struct tap t = { 0 };
	struct nsrun_config cfg;
	struct nsrun_error err;
	struct strv w;

	int rc = parse(", \"env\": [\"A=1\", \"PATH=/bin\"], \"user\": {\"uid\": 1000, \"gid\": 1001},"
		       " \"capabilities\": {\"bounding\": [\"CAP_CHOWN\"]}",
		       ", \"hostname\": \"box\", \"mounts\": ["
		       "{\"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\"},"
		       "{\"destination\": \"/data\", \"type\": \"bind\", \"source\": \"/tmp\", \"options\": [\"rbind\", \"ro\"]},"
		       "{\"destination\": \"/scratch\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"size=1m\", \"mode=700\"]},"
		       "{\"destination\": \"/sys\", \"type\": \"sysfs\", \"source\": \"sysfs\"}],"
		       " \"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"mount\"}],"
		       " \"resources\": {\"memory\": {\"limit\": 268435456}, \"pids\": {\"limit\": 64},"
		       " \"cpu\": {\"quota\": 50000, \"period\": 100000}}}",
		       &cfg, &w, &err);
	tap_int(&t, "a full config parses", 0, rc);
	tap_str(&t, "  ... args", "sh", cfg.process.args.n ? cfg.process.args.v[0] : "");
	tap_str(&t, "  ... env", "1", strv_getenv(&cfg.process.env, "A") ? strv_getenv(&cfg.process.env, "A") : "");
	tap_str(&t, "  ... cwd", "/tmp", cfg.process.cwd ? cfg.process.cwd : "");
	tap_int(&t, "  ... uid", 1000, cfg.process.uid);
	tap_int(&t, "  ... gid", 1001, cfg.process.gid);
	tap_str(&t, "  ... hostname", "box", cfg.hostname);
	tap_int(&t, "  ... one bind mount (proc is nsrun's own, sysfs a warning)", 1, (long long)cfg.n_mounts);
	OK("  ... read-only, at /data", cfg.n_mounts == 1 && !cfg.mounts[0].rw &&
	       strcmp(cfg.mounts[0].destination, "/data") == 0);
	OK("  ... a tmpfs of 1 MiB, mode 0700", cfg.n_tmpfs == 1 && cfg.tmpfs[0].size_bytes == 1 << 20 &&
	       cfg.tmpfs[0].mode == 0700);
	tap_int(&t, "  ... memory", 268435456, (long long)cfg.limits.memory_bytes);
	tap_int(&t, "  ... pids", 64, (long long)cfg.limits.pids);
	tap_int(&t, "  ... cpus (thousandths)", 500, (long long)cfg.limits.cpus_milli);
	tap_int(&t, "  ... no wall-clock limit", 0, (long long)cfg.limits.timeout_us);
	OK("  ... warns that capabilities are not granted", has_warning(&w, "process.capabilities: "));
	OK("  ... warns that /sys is not mounted", has_warning(&w, "mounts[3]: sysfs at /sys"));
	OK("  ... warns of the namespaces it makes all the same",
	       has_warning(&w, "linux.namespaces: no network entry"));
	strv_free(&w);
	config_free(&cfg);

	rc = parse("", ", \"hostname\": \"h\", \"linux\": {\"namespaces\": [{\"type\": \"ipc\", \"path\": "
		   "\"/proc/1/ns/ipc\"}, {\"type\": \"uts\", \"path\": \"/proc/1/ns/uts\"}]}", &cfg, &w, &err);
	OK("ipc and uts namespace paths: joined (checked when the run opens them: netjoin.h)",
	   rc == 0 && cfg.ns_path[NSRUN_JOIN_IPC] && strcmp(cfg.ns_path[NSRUN_JOIN_IPC], "/proc/1/ns/ipc") == 0 &&
	   cfg.ns_path[NSRUN_JOIN_UTS] && strcmp(cfg.ns_path[NSRUN_JOIN_UTS], "/proc/1/ns/uts") == 0);
	OK("  ... a hostname with a joined uts: a warning, not set",
	   has_warning(&w, "hostname: not set: the uts namespace is joined"));
	config_free(&cfg);
	strv_free(&w);
	rc = parse("", ", \"linux\": {\"namespaces\": [{\"type\": \"network\", \"path\": \"/run/netns/p\"}]}", &cfg,
		   &w, &err);
	OK("a network namespace path: joined (checked when the run opens it: netjoin.h)",
	   rc == 0 && cfg.network == NSRUN_NETWORK_PATH && strcmp(cfg.network_name, "/run/netns/p") == 0);
	OK("  ... and no warning that it asks for the caller's", !has_warning(&w, "linux.namespaces: no network entry"));
	config_free(&cfg);
	strv_free(&w);
	rc = parse(", \"user\": {\"uid\": 5, \"gid\": 5, \"additionalGids\": [7, 9]}",
		   ", \"linux\": {\"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1},"
		   " {\"containerID\": 1, \"hostID\": 100000, \"size\": 999}],"
		   " \"gidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1},"
		   " {\"containerID\": 1, \"hostID\": 100000, \"size\": 999}]}", &cfg, &w, &err);
	OK("uid and gid ranges: the run maps them as given (userns subids)",
	   rc == 0 && cfg.userns == NSRUN_USERNS_SUBIDS && cfg.n_uid_mappings == 2 && cfg.n_gid_mappings == 2 &&
	   cfg.uid_mappings[1].host_id == 100000 && cfg.uid_mappings[1].size == 999);
	OK("  ... with additionalGids", cfg.process.n_additional_gids == 2 && cfg.process.additional_gids[1] == 9);
	config_free(&cfg);
	strv_free(&w);
	rc = parse(", \"user\": {\"uid\": 0, \"gid\": 0, \"additionalGids\": [5]}", "", &cfg, &w, &err);
	OK("additionalGids with one gid mapped: a warning, none set",
	   rc == 0 && cfg.userns == NSRUN_USERNS_ONE && cfg.process.n_additional_gids == 0 &&
	   has_warning(&w, "process.user.additionalGids: not set"));
	config_free(&cfg);
	strv_free(&w);

	rc = parse("", ", \"mounts\": [{\"destination\": \"/r\", \"type\": \"bind\", \"source\": \"/tmp\","
		   " \"options\": [\"rbind\", \"rro\"]}, {\"destination\": \"/w\", \"type\": \"bind\", \"source\": \"/tmp\","
		   " \"options\": [\"rbind\", \"noexec\", \"frobnicate\"]}]", &cfg, &w, &err);
	OK("a bind with runc's rro (recursive read-only) is read-only",
	   rc == 0 && cfg.n_mounts == 2 && !cfg.mounts[0].rw);
	OK("  ... control: one without is writable", rc == 0 && cfg.n_mounts == 2 && cfg.mounts[1].rw);
	OK("  ... noexec, which nsrun does not apply, is a warning", has_warning(&w, "mounts[1].options: noexec not applied"));
	OK("  ... and so is an unknown option", has_warning(&w, "mounts[1].options: \"frobnicate\" not applied"));
	config_free(&cfg);
	strv_free(&w);

	rc = parse("", ", \"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\"}}", &cfg, &w, &err);
	OK("a seccomp profile that allows by default: a warning", rc == 0 && has_warning(&w, "linux.seccomp: defaultAction"));
	config_free(&cfg);
	strv_free(&w);
	rc = parse("", ", \"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ERRNO\"}}", &cfg, &w, &err);
	OK("  ... control: one that denies by default: none", rc == 0 && !has_warning(&w, "linux.seccomp: defaultAction"));
	config_free(&cfg);
	strv_free(&w);

	rc = parse("", "}", &cfg, &w, &err);
	OK("not JSON: refused, saying so", rc < 0 && strncmp(err.msg, "config.json: not a JSON object", 30) == 0);
	config_free(&cfg);
	strv_free(&w);
	{
		const char *doc = "{\"ociVersion\": \"1.2.0\", \"root\": {\"path\": \"/\"}, \"process\": {\"args\": \"true\", "
				  "\"cwd\": \"/\"}}";
		memset(&w, 0, sizeof(w));
		config_init(&cfg, &err);
		rc = oci_config_parse("/", doc, strlen(doc), &cfg, &w, &err);
		OK("process.args a string: names process.args", rc < 0 &&
		       strcmp(err.msg, "config.json: process.args: expected an array of strings") == 0);
		config_free(&cfg);
		strv_free(&w);
	}
	/* process.oomScoreAdj and the masks beyond nsrun's own list: applied, not warned of */
	rc = parse(", \"oomScoreAdj\": -500", ", \"linux\": {\"maskedPaths\": [\"/proc/kcore\", \"/sys/firmware\","
		   " \"/secret//dir/\"], \"readonlyPaths\": [\"/data\"]}", &cfg, &w, &err);
	tap_int(&t, "oomScoreAdj and masked paths parse", 0, rc);
	OK("  ... oomScoreAdj -500", cfg.oom_score_adj_set && cfg.oom_score_adj == -500);
	OK("  ... one masked path beyond nsrun's list (/proc/kcore is in it, /sys absent), normalised",
	   cfg.masked_paths.n == 1 && strcmp(cfg.masked_paths.v[0], "/secret/dir") == 0);
	OK("  ... one read-only path", cfg.readonly_paths.n == 1 && strcmp(cfg.readonly_paths.v[0], "/data") == 0);
	OK("  ... no warning of them", !has_warning(&w, "process.oomScoreAdj") && !has_warning(&w, "linux.maskedPaths") &&
	   !has_warning(&w, "linux.readonlyPaths"));
	strv_free(&w);
	config_free(&cfg);
	rc = parse("", "", &cfg, &w, &err);
	OK("without them: not set", rc == 0 && !cfg.oom_score_adj_set && cfg.masked_paths.n == 0);
	strv_free(&w);
	config_free(&cfg);

	/* linux.sysctl (runc's rule), rootfsPropagation, devices (oci_config_dev.c) */
	rc = parse("", ", \"linux\": {\"namespaces\": [{\"type\": \"network\"}, {\"type\": \"ipc\"}],"
		   " \"sysctl\": {\"net.ipv4.ip_forward\": \"1\", \"kernel.shmmax\": \"1000\","
		   " \"fs.mqueue.msg_max\": \"20\"}, \"rootfsPropagation\": \"rslave\"}", &cfg, &w, &err);
	OK("sysctl of the net and IPC namespaces: taken, in order", rc == 0 && cfg.sysctl.n == 3 &&
	   strcmp(cfg.sysctl.v[0], "net.ipv4.ip_forward=1") == 0 && strcmp(cfg.sysctl.v[2], "fs.mqueue.msg_max=20") == 0);
	OK("rootfsPropagation rslave: MS_SLAVE | MS_REC", cfg.rootfs_propagation == (MS_SLAVE | MS_REC));
	OK("  ... no warning of them", !has_warning(&w, "linux.sysctl") && !has_warning(&w, "linux.rootfsPropagation"));
	strv_free(&w);
	config_free(&cfg);
	rc = parse("", "", &cfg, &w, &err);
	OK("without them: none, propagation 0 (nsrun's private)", rc == 0 && cfg.sysctl.n == 0 &&
	   cfg.rootfs_propagation == 0 && cfg.n_devices == 0);
	strv_free(&w);
	config_free(&cfg);
	rc = parse("", ", \"linux\": {\"devices\": [{\"path\": \"/dev/null\", \"type\": \"c\", \"major\": 1,"
		   " \"minor\": 3}, {\"path\": \"/dev/q/fifo\", \"type\": \"p\", \"fileMode\": 384}]}", &cfg, &w, &err);
	OK("devices: /dev/null (nsrun's own node) left out, a FIFO taken with its mode", rc == 0 && cfg.n_devices == 1 &&
	   strcmp(cfg.devices[0].path, "/dev/q/fifo") == 0 && cfg.devices[0].type == 'p' && cfg.devices[0].file_mode == 0600);
	strv_free(&w);
	config_free(&cfg);
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
		refused(&t, refusals[i].desc, refusals[i].process_extra, refusals[i].top_extra, refusals[i].want);
	return tap_done(&t);
}
